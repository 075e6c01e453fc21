import { describe, expect, it } from "vitest";
import { ActivityReporter } from "../src/realtime/activity.js";
import { Connections } from "../src/realtime/connections.js";
import { readEnvelope } from "../src/realtime/envelope.js";
import { serverEventJson } from "../src/realtime/frames.js";
import { ManualClock } from "./manual-clock.js";

const lite = { mode: "LITE" as const, accepts: new Set(["agent.speak"]) };

describe("readEnvelope", () => {
  it("takes type or event_type and the client's event_id", () => {
    expect(readEnvelope('{"type":"agent.speak","event_id":"e1","audio":"AA=="}', lite)).toMatchObject({
      ok: true,
      type: "agent.speak",
      eventId: "e1",
      payload: { audio: "AA==" },
    });
    expect(readEnvelope('{"event_type":"session.keep_alive"}', lite)).toMatchObject({
      ok: true,
      type: "session.keep_alive",
      eventId: null,
    });
  });

  it.each([
    ["{not json", "invalid_json", /not valid JSON/],
    ["[1,2]", "invalid_message", /JSON object, got an array/],
    ['"text"', "invalid_message", /JSON object, got a string/],
    ["null", "invalid_message", /got null/],
    ['{"audio":"AA=="}', "invalid_message", /no type/],
    ['{"type":7}', "invalid_message", /non-empty string/],
    ['{"type":"agent.dance"}', "unknown_event", /unknown event type "agent.dance"/],
    ['{"type":"avatar.repeat","text":"hi"}', "wrong_mode", /FULL mode event; this session runs in LITE mode/],
  ])("refuses %s as %s", (text, errorType, message) => {
    const envelope = readEnvelope(text, lite);
    expect(envelope).toMatchObject({ ok: false, errorType });
    if (!envelope.ok) expect(envelope.message).toMatch(message);
  });

  it("keeps the event_id of a refused event so the error can answer it", () => {
    expect(readEnvelope('{"type":"nope","event_id":"e9"}', lite)).toMatchObject({ ok: false, eventId: "e9" });
  });

  it("refuses LITE events in a FULL session", () => {
    const full = { mode: "FULL" as const, accepts: new Set(["avatar.repeat"]) };
    expect(readEnvelope('{"type":"agent.speak"}', full)).toMatchObject({
      ok: false,
      errorType: "wrong_mode",
    });
  });
});

describe("serverEventJson", () => {
  it("puts event_id, source_event_id and session_id on every event; a mode cannot override them", () => {
    const json = JSON.parse(
      serverEventJson("s1", {
        type: "agent.speak_started",
        sourceEventId: "u1",
        session_id: "x",
        event_id: "y",
      }),
    );
    expect(json).toMatchObject({ type: "agent.speak_started", source_event_id: "u1", session_id: "s1" });
    expect(json.event_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(JSON.parse(serverEventJson("s1", { type: "warning" })).source_event_id).toBeNull();
  });
});

describe("ActivityReporter", () => {
  it("holds the latest activity for the next heartbeat, without a call of its own", () => {
    const clock = new ManualClock();
    const reports: number[] = [];
    const activity = new ActivityReporter(clock, (at) => reports.push(at));
    expect(activity.pending).toBeUndefined();
    activity.touch();
    const first = clock.now();
    clock.advance(1_000);
    activity.touch();
    const second = clock.now();
    expect(activity.pending).toBe(second);
    // A heartbeat that carried the first moment does not clear what came after it.
    activity.carried(first);
    expect(activity.pending).toBe(second);
    activity.carried(second);
    expect(activity.pending).toBeUndefined();
    expect(reports).toEqual([]);
    activity.touch();
    activity.stop();
    expect(activity.pending).toBeUndefined();
    activity.touch();
    expect(activity.pending).toBeUndefined();
  });

  it("reports a keep-alive at once unless one went out within the last second", () => {
    const clock = new ManualClock();
    const reports: number[] = [];
    const activity = new ActivityReporter(clock, (at) => reports.push(at));
    activity.touch();
    activity.keepAlive();
    // The keep-alive carried the activity before it.
    expect(activity.pending).toBeUndefined();
    clock.advance(500);
    activity.keepAlive();
    clock.advance(600);
    activity.keepAlive();
    expect(reports).toEqual([clock.now() - 1_100, clock.now()]);
  });
});

describe("Connections", () => {
  it("opens, refreshes, closes and expires silent sockets", () => {
    const c = new Connections();
    expect(c.open("a", 0)).toBe(true);
    expect(c.open("a", 10)).toBe(false);
    expect(c.open("b", 10)).toBe(true);
    expect(c.expire(100, 95)).toEqual([]);
    expect(c.expire(106, 95)).toEqual(["a", "b"]);
    expect(c.size).toBe(0);
    expect(c.hadAny).toBe(true);
    expect(c.close("a")).toBe(false);
  });
});
