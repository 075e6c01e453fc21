import { timestampMs } from "@bufbuild/protobuf/wkt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EventClient, pcmBase64, refusal } from "./realtime-client.js";
import { start, startedLite, stopSession } from "./realtime-support.js";
import { eventually, grant } from "./sessions-support.js";
import { atNextSecond, startTestSuite, type TestSuite } from "./support.js";

/**
 * The LITE protocol over a real socket against the whole suite: a client connects to the ws_url of a
 * start and speaks the protocol; the pipeline worker runs the session behind the gateway on the bus.
 * Timings are asserted with generous bounds around the audio's duration (a loaded machine only delays).
 */

let suite: TestSuite;

beforeAll(async () => {
  suite = await startTestSuite();
  await grant(suite, "1000");
});
afterAll(async () => {
  await suite?.stop();
});

async function connected(): Promise<{ client: EventClient; session_id: string; session_token: string }> {
  const session = await startedLite(suite);
  const client = await EventClient.connect(session.ws_url);
  await client.next("session.state_updated", (e) => e.state === "connected");
  return { client, ...session };
}

describe("connecting", () => {
  it("says connected, with event_id, source_event_id and session_id on the event", async () => {
    const session = await startedLite(suite);
    const client = await EventClient.connect(session.ws_url);
    const event = await client.next("session.state_updated");
    expect(event).toMatchObject({
      state: "connected",
      source_event_id: null,
      session_id: session.session_id,
    });
    expect(event.event_id).toMatch(/^[0-9a-f-]{36}$/);
    await eventually(async () => {
      const { session: s } = await suite.clients.sessions.getSession({
        spaceId: suite.spaceId,
        sessionId: session.session_id,
      });
      expect(s?.connectionState).toBe(2); // CONNECTED
    });
    await client.close();
  });

  it("refuses an unknown ticket, a used one and no ticket with 401, and a wrong path with 404", async () => {
    const session = await startedLite(suite);
    const first = await EventClient.connect(session.ws_url);
    expect((await refusal(session.ws_url)).status).toBe(401);
    const url = new URL(session.ws_url);
    url.searchParams.set("ticket", "not-a-ticket");
    expect((await refusal(url.toString())).status).toBe(401);
    url.searchParams.delete("ticket");
    expect((await refusal(url.toString())).status).toBe(401);
    url.pathname = "/v1/sessions/wss";
    expect((await refusal(url.toString())).status).toBe(404);
    await first.close();
  });

  it("refuses the ticket of a session that has ended with 409", async () => {
    const session = await startedLite(suite);
    await stopSession(suite, session.session_token);
    const refused = await refusal(session.ws_url);
    expect(refused.status).toBe(409);
    expect(JSON.parse(refused.body)).toMatchObject({ code: 4090, data: null });
  });

  it("lets a client reconnect with a new ticket from a second start, and the session goes on", async () => {
    const { client, session_token, session_id } = await connected();
    await client.close();
    const again = await start(suite, session_token);
    expect(again.session_id).toBe(session_id);
    const second = await EventClient.connect(again.ws_url);
    await second.next("session.state_updated", (e) => e.state === "connected");
    second.send({ type: "agent.speak_end", audio: pcmBase64(100), event_id: "after-reconnect" });
    await second.next("agent.speak_ended", (e) => e.source_event_id === "after-reconnect");
    await second.close();
  });

  it("counts upgrades per client IP like other requests without credentials (10 per second)", async () => {
    const url = new URL((await startedLite(suite)).ws_url);
    url.searchParams.set("ticket", "unknown");
    await atNextSecond();
    const statuses = await Promise.all(
      Array.from({ length: 12 }, async () => (await refusal(url.toString())).status),
    );
    expect(statuses.filter((s) => s === 401)).toHaveLength(10);
    expect(statuses.filter((s) => s === 429)).toHaveLength(2);
    await atNextSecond();
  });
});

describe("an utterance", () => {
  it("acknowledges each chunk, starts at the first audio and ends about one audio-duration later", async () => {
    const { client } = await connected();
    client.send({ type: "agent.speak", event_id: "utt-1", audio: pcmBase64(400) });
    client.send({ type: "agent.speak", event_id: "chunk-2", audio: pcmBase64(400) });
    client.send({ type: "agent.speak", audio: pcmBase64(400) });
    client.send({ type: "agent.speak_end", event_id: "end-1" });
    const ended = await client.next("agent.speak_ended");
    const sequence = client.events
      .filter((e) => e.type.startsWith("agent."))
      .map((e) => `${e.type} ${e.source_event_id}${e.state ? ` ${e.state}` : ""}`);
    expect(sequence).toEqual([
      "agent.audio_buffer_appended utt-1",
      "agent.speak_started utt-1",
      "agent.state_updated null talking",
      "agent.audio_buffer_appended chunk-2",
      "agent.audio_buffer_appended null",
      "agent.audio_buffer_committed end-1",
      "agent.speak_ended utt-1",
      "agent.state_updated null idle",
    ]);
    const started = client.all("agent.speak_started")[0];
    const played = ended.receivedAt - (started?.receivedAt ?? 0);
    expect(played).toBeGreaterThanOrEqual(1100);
    expect(played).toBeLessThan(1200 + 3000);
    expect(client.all("agent.state_updated").map((e) => e.previous_state)).toEqual(["idle", "talking"]);
    await client.close();
  });

  it("is interrupted in the middle: speak_interrupted, audio_buffer_cleared, and never speak_ended", async () => {
    const { client } = await connected();
    client.send({ type: "agent.speak", event_id: "long", audio: pcmBase64(1500) });
    client.send({ type: "agent.speak_end" });
    await client.next("agent.speak_started");
    await new Promise((r) => setTimeout(r, 300));
    client.send({ type: "agent.interrupt", event_id: "stop-it" });
    await client.next("agent.speak_interrupted", (e) => e.source_event_id === "long");
    await client.next("agent.audio_buffer_cleared", (e) => e.source_event_id === "stop-it");
    // A new utterance that ends after the first one would have: the first one never ends.
    client.send({ type: "agent.speak_end", event_id: "next", audio: pcmBase64(1500) });
    await client.next("agent.speak_ended", (e) => e.source_event_id === "next");
    expect(client.all("agent.speak_ended").map((e) => e.source_event_id)).toEqual(["next"]);
    await client.close();
  });

  it("reports listening: idle -> listening -> talking -> listening -> idle", async () => {
    const { client } = await connected();
    client.send({ type: "agent.start_listening" });
    client.send({ type: "agent.speak_end", event_id: "short", audio: pcmBase64(100) });
    await client.next("agent.speak_ended");
    client.send({ type: "agent.stop_listening" });
    await client.next("agent.state_updated", (e) => e.state === "idle");
    expect(client.all("agent.state_updated").map((e) => `${e.previous_state}->${e.state}`)).toEqual([
      "idle->listening",
      "listening->talking",
      "talking->listening",
      "listening->idle",
    ]);
    await client.close();
  });
});

describe("bad input", () => {
  it("answers every bad message with an error event naming the problem, and the session goes on", async () => {
    const { client, session_id } = await connected();
    const bad: [string | Buffer, string, RegExp][] = [
      ["{oops", "invalid_json", /not valid JSON/],
      ["[1,2,3]", "invalid_message", /JSON object/],
      ['{"audio":"AAAA"}', "invalid_message", /no type/],
      ['{"type":"agent.moonwalk"}', "unknown_event", /agent\.moonwalk/],
      ['{"type":"avatar.repeat","text":"hi"}', "wrong_mode", /FULL mode event/],
      ['{"type":"user.audio","audio":"AAAA"}', "wrong_mode", /FULL mode event/],
      ['{"type":"agent.speak","event_id":"b64","audio":"***"}', "invalid_audio", /not valid base64/],
      ['{"type":"agent.speak","event_id":"odd","audio":"AAAA"}', "invalid_audio", /3 bytes.*even/],
      ['{"type":"agent.speak","audio":""}', "invalid_audio", /empty/],
      ['{"type":"agent.speak_end","audio":"@@"}', "invalid_audio", /not valid base64/],
      ['{"type":"vendorA_agent_command","vendorA_event_type":"x"}', "no_vendorA_agent", /vendorA agent/],
      [Buffer.from([1, 2, 3]), "invalid_message", /binary frames/],
    ];
    for (const [message, errorType, text] of bad) {
      if (Buffer.isBuffer(message)) client.ws.send(message, { binary: true });
      else client.sendText(message);
      const error = await client.next("error");
      expect(error, String(message)).toMatchObject({ session_id, error: { type: errorType } });
      expect(error.error.message).toMatch(text);
    }
    const b64 = client.all("error").find((e) => e.error.message.includes("not valid base64"));
    expect(b64?.source_event_id).toBe("b64");
    client.send({ event_type: "agent.speak_end", event_id: "still-here", audio: pcmBase64(50) });
    await client.next("agent.speak_ended", (e) => e.source_event_id === "still-here");
    expect(client.ws.readyState).toBe(client.ws.OPEN);
    await client.close();
  });

  it("closes the socket with 1009 for a message over 1 MiB", async () => {
    const { client } = await connected();
    client.sendText(JSON.stringify({ type: "agent.speak", audio: "A".repeat(1024 * 1024) }));
    expect((await client.closed).code).toBe(1009);
  });

  it("relays a message of exactly 1 MiB (on NATS too: one bus message carries it with its frame)", async () => {
    const { client } = await connected();
    const json = JSON.stringify({ event_type: "agent.speak", event_id: "big", audio: pcmBase64(16_380) });
    const limit = 1024 * 1024;
    // JSON whitespace pads the message to the limit, which is allowed (only a larger one is refused).
    client.sendText(`${json.slice(0, -1)}${" ".repeat(limit - json.length)}}`);
    await client.next("agent.speak_started");
    expect(client.all("error")).toEqual([]);
    await client.close();
  });
});

describe("the session's life", () => {
  it("keeps the session alive on session.keep_alive", async () => {
    const { client, session_id } = await connected();
    const activity = async () => {
      const { session } = await suite.clients.sessions.getSession({
        spaceId: suite.spaceId,
        sessionId: session_id,
      });
      return session?.lastActivityAt ? timestampMs(session.lastActivityAt) : 0;
    };
    const before = await eventually(async () => {
      const t = await activity();
      expect(t).toBeGreaterThan(0);
      return t;
    });
    await new Promise((r) => setTimeout(r, 1100));
    client.send({ type: "session.keep_alive" });
    await eventually(async () => expect(await activity()).toBeGreaterThan(before));
    await client.close();
  });

  it("sends session.stopped with the end reason when the session is stopped, then closes with 1000", async () => {
    const { client, session_token, session_id } = await connected();
    const second = await EventClient.connect((await start(suite, session_token)).ws_url);
    await second.next("session.state_updated");
    await stopSession(suite, session_token);
    for (const c of [client, second]) {
      const stopped = await c.next("session.stopped");
      expect(stopped).toMatchObject({ end_reason: "USER_CLOSED", session_id });
      expect((await c.closed).code).toBe(1000);
    }
  });
});
