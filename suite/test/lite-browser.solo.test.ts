import { describe, expect, it } from "vitest";
import { browserSuite } from "./browser-support.js";
import { EventClient, pcmBase64 } from "./realtime-client.js";
import { startedLite, stopSession } from "./realtime-support.js";

/**
 * A LITE session heard in a real browser: the caller streams its own audio (`agent.speak`), and a
 * Chromium page watching the session over WHEP (as a customer's player does, with the session token)
 * hears that voice on the avatar's audio track, and silence before and after it. Measured in the page
 * with WebAudio on the received track.
 */

const { available, ctx } = browserSuite("the LITE voice browser test");

interface PageGlobals {
  __levels: { t: number; rms: number }[];
  __connected: boolean;
}

/**
 * The page's part (browser JavaScript, run as it is): a recvonly WHEP viewer as the embed page has one
 * (every candidate in the offer, the session token as bearer), the received tracks played in a <video>,
 * and the level of the received audio recorded every 10 ms in __levels.
 */
const watchAndListen = (url: string, token: string) => `(async () => {
  const url = ${JSON.stringify(url)};
  const token = ${JSON.stringify(token)};
  window.__levels = [];
  window.__connected = false;
  const pc = new RTCPeerConnection();
  pc.addTransceiver("video", { direction: "recvonly" });
  pc.addTransceiver("audio", { direction: "recvonly" });
  const stream = new MediaStream();
  const video = document.createElement("video");
  video.srcObject = stream;
  document.body.appendChild(video);
  pc.ontrack = (e) => {
    stream.addTrack(e.track);
    video.play().catch(() => {});
  };
  pc.onconnectionstatechange = () => {
    if (pc.connectionState === "connected") window.__connected = true;
  };
  await pc.setLocalDescription(await pc.createOffer());
  await new Promise((resolve) => {
    if (pc.iceGatheringState === "complete") resolve();
    pc.addEventListener("icegatheringstatechange", () => {
      if (pc.iceGatheringState === "complete") resolve();
    });
    setTimeout(resolve, 2000);
  });
  const res = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/sdp", Authorization: "Bearer " + token },
    body: pc.localDescription.sdp,
  });
  if (res.status !== 201) throw new Error("WHEP answered " + res.status + ": " + (await res.text()));
  await pc.setRemoteDescription({ type: "answer", sdp: await res.text() });
  await new Promise((resolve) => {
    const wait = () => (stream.getAudioTracks().length > 0 ? resolve() : setTimeout(wait, 20));
    wait();
  });
  const audio = new AudioContext();
  await audio.resume();
  const analyser = audio.createAnalyser();
  analyser.fftSize = 512;
  audio.createMediaStreamSource(new MediaStream(stream.getAudioTracks())).connect(analyser);
  const buffer = new Float32Array(512);
  setInterval(() => {
    analyser.getFloatTimeDomainData(buffer);
    let sum = 0;
    for (const v of buffer) sum += v * v;
    window.__levels.push({ t: performance.now(), rms: Math.sqrt(sum / buffer.length) });
  }, 10);
})()`;

/** How long the caller's voice lasts: a 220 Hz tone at about 6 % of full scale (pcmBase64). */
const VOICE_MS = 2_000;

/** A Chromium page watching and listening to the session (same origin as the gateway: no CORS). */
async function openListener(s: { session_id: string; session_token: string }) {
  const page = await ctx.browser.newPage();
  await page.goto(`${ctx.suite.gatewayUrl}/readyz`);
  await page.evaluate(
    watchAndListen(`${ctx.suite.gatewayUrl}/v1/sessions/${s.session_id}/whep`, s.session_token),
  );
  await page.waitForFunction(() => (globalThis as unknown as PageGlobals).__connected, undefined, {
    timeout: 20_000,
  });
  /** The received audio's levels (RMS, every 10 ms) since the page listened. */
  const levels = () => page.evaluate(() => (globalThis as unknown as PageGlobals).__levels.map((l) => l.rms));
  return { page, levels };
}

const loudest = (rms: number[]) => Math.max(0, ...rms);

describe.skipIf(!available)("a LITE session in a browser", () => {
  it("plays the caller's agent.speak audio to a viewer, and silence around it", async () => {
    const s = await startedLite(ctx.suite);
    const client = await EventClient.connect(s.ws_url);
    await client.next("session.state_updated");

    const { page, levels } = await openListener(s);
    // Before anyone speaks: the avatar is silent.
    await page.waitForTimeout(1_500);
    const before = await levels();

    client.send({ type: "agent.speak", event_id: "v1", audio: pcmBase64(VOICE_MS / 2) });
    client.send({ type: "agent.speak_end", event_id: "v1", audio: pcmBase64(VOICE_MS / 2) });
    await client.next("agent.speak_started");
    await client.next("agent.speak_ended");
    await page.waitForTimeout(500);
    const during = (await levels()).slice(before.length);
    await page.waitForTimeout(1_500);
    const after = (await levels()).slice(before.length + during.length);
    await page.close();
    await client.close();
    await stopSession(ctx.suite, s.session_token);

    // A tone at ~0.06 of full scale has an RMS of ~0.043; silence (Opus comfort noise) stays far below.
    const heard = during.filter((rms) => rms > 0.02).length;
    console.info("LITE voice in the browser:", {
      loudestBefore: loudest(before),
      loudestDuring: loudest(during),
      loudestAfter: loudest(after.slice(50)),
      loudSamplesDuring: heard,
    });
    expect(before.length).toBeGreaterThan(50);
    expect(loudest(before)).toBeLessThan(0.005);
    // About two seconds of voice, sampled every 10 ms: well over a second of it heard.
    expect(heard).toBeGreaterThan(100);
    expect(loudest(during)).toBeGreaterThan(0.03);
    expect(loudest(after.slice(50))).toBeLessThan(0.005);
  });

  it("lets a viewer who comes in during an utterance hear it from where it plays, and not past its end", async () => {
    const s = await startedLite(ctx.suite);
    const client = await EventClient.connect(s.ws_url);
    await client.next("session.state_updated");

    // The voice starts while nobody watches: it waits, playing out in real time, for a viewer.
    const utteranceMs = 8_000;
    for (let i = 0; i < utteranceMs / 1_000; i++) {
      client.send({ type: "agent.speak", event_id: "w1", audio: pcmBase64(1_000) });
    }
    client.send({ type: "agent.speak_end", event_id: "w1" });
    await client.next("agent.speak_started");
    const spokenAt = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 1_000));

    const { page, levels } = await openListener(s);
    await client.next("agent.speak_ended", () => true, 20_000);
    const endedAfterMs = Date.now() - spokenAt;
    await page.waitForTimeout(500);
    const during = await levels();
    await page.waitForTimeout(1_500);
    const after = (await levels()).slice(during.length);
    await page.close();
    await client.close();
    await stopSession(ctx.suite, s.session_token);

    const heard = during.filter((rms) => rms > 0.02).length;
    console.info("LITE voice joined late in the browser:", {
      endedAfterMs,
      recordedMs: during.length * 10,
      loudSamplesDuring: heard,
      loudestAfter: loudest(after.slice(50)),
    });
    // Heard: the rest of the utterance, at least a second of it (sampled every 10 ms)...
    expect(heard).toBeGreaterThan(100);
    // ...but not all of it from its start, which the viewer came too late for,
    expect(heard * 10).toBeLessThan(utteranceMs - 800);
    // and nothing after the utterance has ended (a voice replayed from its start would run on).
    expect(after.length).toBeGreaterThan(100);
    expect(loudest(after.slice(50))).toBeLessThan(0.005);
  });
});
