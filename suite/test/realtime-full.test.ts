import { LocalEspeakSynthesizer, speechOf } from "@avatar/providers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EventClient } from "./realtime-client.js";
import { start, stopSession } from "./realtime-support.js";
import { eventually, grant, key, mint } from "./sessions-support.js";
import { json, startTestSuite, type TestSuite } from "./support.js";

/**
 * A FULL sandbox session end to end: minted through the token endpoint, started, connected to over a
 * real socket, answered by the pipeline worker with the local synthesizer's real audio, and written to the
 * transcript the public endpoint reads.
 */

let suite: TestSuite;

beforeAll(async () => {
  suite = await startTestSuite();
  await grant(suite, "100");
});
afterAll(async () => {
  await suite?.stop();
});

/** How long the local synthesizer's audio for `text` lasts (24 kHz, 16-bit mono). */
async function localSpeechMs(text: string): Promise<number> {
  const espeak = new LocalEspeakSynthesizer();
  let bytes = 0;
  for await (const { pcm } of speechOf(espeak, { text, voiceId: "", settings: {}, language: "en" }))
    bytes += pcm.length;
  await espeak.close();
  return bytes / 48;
}

describe("a FULL sandbox session over the event socket", () => {
  it("answers avatar.repeat with speech that plays for the synthesized audio's duration, then transcribes it", async () => {
    const text = "Hello there. This voice is synthesized on this machine.";
    const expectedMs = await localSpeechMs(text);
    expect(expectedMs).toBeGreaterThan(1500);

    const minted = await mint(suite, { is_sandbox: true, max_session_duration: 600 });
    const { ws_url } = await start(suite, minted.session_token);
    const client = await EventClient.connect(ws_url);
    await client.next("session.state_updated", (e) => e.state === "connected");

    client.send({ type: "avatar.repeat", event_id: "r1", text });
    const started = await client.next("avatar.speak_started", (e) => e.source_event_id === "r1", 30_000);
    const ended = await client.next(
      "avatar.speak_ended",
      (e) => e.source_event_id === "r1",
      expectedMs + 30_000,
    );
    const played = ended.receivedAt - started.receivedAt;
    // Never before the audio has played out; later only by scheduling on a loaded machine.
    expect(played).toBeGreaterThanOrEqual(expectedMs - 50);
    expect(played).toBeLessThan(expectedMs + 3_000);
    expect(ended.interrupted).toBe(false);
    const said = client.all("avatar.transcription").find((e) => e.source_event_id === "r1");
    expect(said).toMatchObject({ text, interrupted: false });
    expect(client.all("error")).toEqual([]);

    const transcript = await eventually(async () => {
      const res = await suite.get(`/v1/sessions/${minted.session_id}/transcript`, key(suite.apiKey));
      const data = (await json(res)).data;
      expect(data.transcript_data.map((t: { role: string }) => t.role)).toContain("avatar");
      return data;
    });
    expect(transcript.transcript_data.find((t: { role: string }) => t.role === "avatar").transcript).toBe(
      text,
    );

    await stopSession(suite, minted.session_token);
    expect(await client.next("session.stopped")).toMatchObject({ session_id: minted.session_id });
    expect((await client.closed).code).toBe(1000);
  });
});
