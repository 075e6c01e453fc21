import { describe, expect, it } from "vitest";
import { advertisePublicIp, readRtcSettings } from "../src/webrtc/rtc-settings.js";
import {
  chooseAudioCodec,
  chooseVideoCodec,
  MAX_OFFER_BYTES,
  parseWhepOffer,
} from "../src/webrtc/sdp-offer.js";
import { WhepError } from "../src/webrtc/whep-errors.js";

/** The shape of a browser's recvonly WHEP offer (Chromium's codec list, trimmed). */
const session = [
  "v=0",
  "o=- 1 2 IN IP4 127.0.0.1",
  "s=-",
  "t=0 0",
  "a=group:BUNDLE 0 1",
  "a=ice-ufrag:abcd",
  "a=ice-pwd:0123456789abcdef012345",
  "a=fingerprint:sha-256 AA:BB",
  "a=setup:actpass",
];
const videoSection = [
  "m=video 9 UDP/TLS/RTP/SAVPF 96 97 102 103 127",
  "c=IN IP4 0.0.0.0",
  "a=mid:0",
  "a=recvonly",
  "a=rtpmap:96 VP8/90000",
  "a=rtpmap:97 rtx/90000",
  "a=fmtp:97 apt=96",
  "a=rtpmap:102 H264/90000",
  "a=fmtp:102 level-asymmetry-allowed=1;packetization-mode=0;profile-level-id=42e01f",
  "a=rtpmap:103 H264/90000",
  "a=fmtp:103 level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42001f",
  "a=rtpmap:127 H264/90000",
  "a=fmtp:127 level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42e01f",
];
const audioSection = [
  "m=audio 9 UDP/TLS/RTP/SAVPF 111",
  "c=IN IP4 0.0.0.0",
  "a=mid:1",
  "a=recvonly",
  "a=rtpmap:111 opus/48000/2",
  "a=fmtp:111 minptime=10;useinbandfec=1",
];
const offer = (lines: string[]) => `${lines.join("\r\n")}\r\n`;
const good = offer([...session, ...videoSection, ...audioSection]);

function badOffer(body: unknown): string {
  try {
    parseWhepOffer(body);
  } catch (error) {
    expect(error).toBeInstanceOf(WhepError);
    expect((error as WhepError).kind).toBe("bad_offer");
    return (error as WhepError).message;
  }
  throw new Error("accepted a bad offer");
}

describe("WHEP offer validation", () => {
  it("reads a browser's recvonly offer and picks constrained baseline, packetization-mode 1", () => {
    const parsed = parseWhepOffer(good);
    expect(parsed.video.mid).toBe("0");
    expect(chooseVideoCodec(parsed.video, "H264").payloadType).toBe(127);
    expect(chooseVideoCodec(parsed.video, "VP8").payloadType).toBe(96);
    expect(chooseAudioCodec(parsed.audio).payloadType).toBe(111);
  });

  it("refuses what is not an offer", () => {
    expect(badOffer(undefined)).toMatch(/must be an SDP offer/);
    expect(badOffer("")).toMatch(/must be an SDP offer/);
    expect(badOffer({ sdp: good })).toMatch(/must be an SDP offer/);
    expect(badOffer("hello world")).toMatch(/v=0/);
    expect(badOffer("v=0\r\nthis is not sdp\r\n")).toMatch(/malformed/);
    expect(badOffer(good.replace("a=setup:actpass", "a=setup:active"))).toMatch(/answer/);
    expect(badOffer(good + "a=x".repeat(MAX_OFFER_BYTES))).toMatch(/larger than/);
  });

  it("refuses offers missing what a viewer needs", () => {
    expect(badOffer(offer([...session, ...audioSection]))).toMatch(/one video section/);
    expect(badOffer(offer([...session, ...videoSection]))).toMatch(/one audio section/);
    expect(badOffer(offer([...session, ...videoSection, ...videoSection, ...audioSection]))).toMatch(
      /it has 2/,
    );
    expect(badOffer(good.replace("a=ice-ufrag:abcd\r\n", ""))).toMatch(/ICE/);
    expect(badOffer(good.replace("a=fingerprint:sha-256 AA:BB\r\n", ""))).toMatch(/fingerprint/);
    expect(badOffer(good.replace("a=mid:0\r\n", ""))).toMatch(/video section has no a=mid/);
    expect(badOffer(good.replace("a=recvonly", "a=sendonly"))).toMatch(/sendonly/);
    expect(badOffer(good.replace("m=audio 9", "m=audio 0"))).toMatch(/disabled/);
  });

  it("refuses an offer without a codec we can send", () => {
    const noH264 = parseWhepOffer(good.replace(/packetization-mode=1/g, "packetization-mode=0"));
    expect(() => chooseVideoCodec(noH264.video, "H264")).toThrow(/H264 constrained baseline/);
    const noVp8 = parseWhepOffer(good.replace("VP8/90000", "VP9/90000"));
    expect(() => chooseVideoCodec(noVp8.video, "VP8")).toThrow(/no VP8/);
    const noOpus = parseWhepOffer(good.replace("opus/48000/2", "PCMU/8000"));
    expect(() => chooseAudioCodec(noOpus.audio)).toThrow(/Opus/);
  });
});

describe("WebRTC settings", () => {
  it("reads ports, addresses and ICE servers and names bad values", () => {
    expect(readRtcSettings({})).toEqual({ iceServers: [] });
    expect(
      readRtcSettings({
        WEBRTC_UDP_PORT_MIN: "40000",
        WEBRTC_UDP_PORT_MAX: "40100",
        WEBRTC_PUBLIC_IP: "203.0.113.7",
        WEBRTC_ICE_SERVERS: "stun:stun.example.org:3478, turn:u:p@turn.example.org:3478",
      }),
    ).toEqual({
      portRange: { min: 40000, max: 40100 },
      publicIp: "203.0.113.7",
      iceServers: ["stun:stun.example.org:3478", "turn:u:p@turn.example.org:3478"],
    });
    expect(() => readRtcSettings({ WEBRTC_UDP_PORT_MIN: "40000" })).toThrow(/set together/);
    expect(() => readRtcSettings({ WEBRTC_UDP_PORT_MIN: "x", WEBRTC_UDP_PORT_MAX: "1" })).toThrow(
      /WEBRTC_UDP_PORT_MIN/,
    );
    expect(() => readRtcSettings({ WEBRTC_ICE_SERVERS: "http://x" })).toThrow(/not a stun: or turn: URL/);
  });

  it("advertises the public IP in host candidates", () => {
    const answer =
      "a=candidate:1 1 UDP 2114977791 10.0.0.5 40001 typ host\r\na=candidate:2 1 UDP 2114977791 10.0.0.6 40001 typ host\r\n";
    expect(advertisePublicIp(answer, "203.0.113.7")).toBe(
      "a=candidate:1 1 UDP 2114977791 203.0.113.7 40001 typ host\r\n",
    );
    expect(advertisePublicIp(answer, undefined)).toBe(answer);
  });
});
