/**
 * A WHEP viewer's SDP offer, checked before any peer exists: an offer (not an answer), one video and one
 * audio section the viewer receives, ICE and DTLS credentials, and a codec we can send. Every failure is
 * a WhepError("bad_offer") saying what is wrong.
 */
import type { VideoCodecName } from "../frames.js";
import { WhepError } from "./whep-errors.js";

/** Larger bodies are refused before parsing (a browser's offer is 3-10 KB). */
export const MAX_OFFER_BYTES = 64 * 1024;

export interface OfferCodec {
  payloadType: number;
  name: string;
  clockRate: number;
  channels: number;
  fmtp: Record<string, string>;
}

export interface OfferSection {
  kind: "video" | "audio";
  mid: string;
  direction: "recvonly" | "sendrecv";
  codecs: OfferCodec[];
}

export interface WhepOffer {
  sdp: string;
  video: OfferSection;
  audio: OfferSection;
}

/** What we put in the answer for a codec: its payload type (the viewer's) and format parameters. */
export interface ChosenCodec {
  payloadType: number;
  fmtp?: string;
}

export const H264_FMTP = "profile-level-id=42e01f;packetization-mode=1;level-asymmetry-allowed=1";
export const OPUS_FMTP = "minptime=10;useinbandfec=1";

function bad(message: string): never {
  throw new WhepError("bad_offer", message);
}

export function parseWhepOffer(body: unknown): WhepOffer {
  if (typeof body !== "string" || body.trim() === "") bad("the body must be an SDP offer");
  const sdp = body as string;
  if (Buffer.byteLength(sdp) > MAX_OFFER_BYTES) bad(`the SDP offer is larger than ${MAX_OFFER_BYTES} bytes`);
  const lines = sdp.split(/\r?\n/).filter((l) => l !== "");
  if (lines[0] !== "v=0") bad("not an SDP document (it must start with v=0)");
  const malformed = lines.find((l) => !/^[a-z]=/.test(l));
  if (malformed !== undefined) bad(`malformed SDP line: ${JSON.stringify(malformed.slice(0, 80))}`);
  const setups = lines.filter((l) => l.startsWith("a=setup:"));
  if (setups.some((l) => l !== "a=setup:actpass")) {
    bad("this SDP is an answer (a=setup is not actpass), WHEP takes the viewer's offer");
  }
  const has = (prefix: string) => lines.some((l) => l.startsWith(prefix));
  if (!has("a=ice-ufrag:") || !has("a=ice-pwd:"))
    bad("the offer has no ICE credentials (a=ice-ufrag, a=ice-pwd)");
  if (!has("a=fingerprint:")) bad("the offer has no DTLS fingerprint (a=fingerprint)");

  const sections = splitSections(lines);
  const video = sections.filter((s) => s.kind === "video");
  const audio = sections.filter((s) => s.kind === "audio");
  const [videoSection] = video;
  const [audioSection] = audio;
  if (video.length !== 1 || !videoSection)
    bad(`the offer must have one video section (m=video), it has ${video.length}`);
  if (audio.length !== 1 || !audioSection)
    bad(`the offer must have one audio section (m=audio), it has ${audio.length}`);
  return { sdp, video: videoSection, audio: audioSection };
}

function splitSections(lines: string[]): OfferSection[] {
  const sections: OfferSection[] = [];
  let current: { kind: string; port: string; lines: string[] } | undefined;
  const finish = () => {
    if (current && (current.kind === "video" || current.kind === "audio")) {
      sections.push(readSection(current.kind, current.port, current.lines));
    }
  };
  for (const line of lines) {
    if (line.startsWith("m=")) {
      finish();
      const [kind = "", port = ""] = line.slice(2).split(" ");
      current = { kind, port, lines: [] };
    } else {
      current?.lines.push(line);
    }
  }
  finish();
  return sections;
}

function readSection(kind: "video" | "audio", port: string, lines: string[]): OfferSection {
  if (port === "0") bad(`the ${kind} section is disabled (port 0)`);
  const mid = lines
    .find((l) => l.startsWith("a=mid:"))
    ?.slice(6)
    .trim();
  if (!mid) bad(`the ${kind} section has no a=mid`);
  const directions = lines.filter((l) => /^a=(sendrecv|sendonly|recvonly|inactive)$/.test(l));
  const direction = directions[0]?.slice(2) ?? "sendrecv";
  if (direction !== "recvonly" && direction !== "sendrecv") {
    bad(`the ${kind} section is ${direction}: a WHEP viewer receives (recvonly)`);
  }
  const codecs = new Map<number, OfferCodec>();
  for (const line of lines) {
    const rtpmap = /^a=rtpmap:(\d+) ([^/\s]+)\/(\d+)(?:\/(\d+))?/.exec(line);
    const [, type, name, clockRate, channels] = rtpmap ?? [];
    if (type && name) {
      const payloadType = Number(type);
      codecs.set(payloadType, {
        payloadType,
        name: name.toUpperCase(),
        clockRate: Number(clockRate),
        channels: Number(channels ?? 1),
        fmtp: codecs.get(payloadType)?.fmtp ?? {},
      });
    }
  }
  for (const line of lines) {
    const [, type, parameters] = /^a=fmtp:(\d+) (.*)$/.exec(line) ?? [];
    const codec = type ? codecs.get(Number(type)) : undefined;
    if (!codec || parameters === undefined) continue;
    for (const pair of parameters.split(";")) {
      const [key, value = ""] = pair.split("=");
      if (key) codec.fmtp[key.trim().toLowerCase()] = value.trim();
    }
  }
  return {
    kind,
    mid: mid as string,
    direction: direction as OfferSection["direction"],
    codecs: [...codecs.values()],
  };
}

/**
 * The viewer's payload type for the session's video codec. H264 must be packetization-mode 1 with a
 * baseline-family profile-level-id (42xxxx; 42e0xx, constrained baseline, preferred).
 */
export function chooseVideoCodec(section: OfferSection, codec: VideoCodecName): ChosenCodec {
  if (codec === "VP8") {
    const vp8 = section.codecs.find((c) => c.name === "VP8" && c.clockRate === 90_000);
    if (!vp8) bad("the offer has no VP8, the codec this session sends");
    return { payloadType: vp8.payloadType };
  }
  const candidates = section.codecs.filter(
    (c) =>
      c.name === "H264" &&
      c.clockRate === 90_000 &&
      c.fmtp["packetization-mode"] === "1" &&
      /^42/i.test(c.fmtp["profile-level-id"] ?? ""),
  );
  const best = candidates.find((c) => /^42e0/i.test(c.fmtp["profile-level-id"] ?? "")) ?? candidates[0];
  if (!best)
    bad("the offer has no H264 constrained baseline with packetization-mode=1, the codec this session sends");
  return { payloadType: best.payloadType, fmtp: H264_FMTP };
}

/** The viewer's payload type for Opus (opus/48000/2, as RFC 7587 spells it even for mono). */
export function chooseAudioCodec(section: OfferSection): ChosenCodec {
  const opus = section.codecs.find((c) => c.name === "OPUS" && c.clockRate === 48_000);
  if (!opus) bad("the offer has no Opus audio");
  return { payloadType: opus.payloadType, fmtp: OPUS_FMTP };
}
