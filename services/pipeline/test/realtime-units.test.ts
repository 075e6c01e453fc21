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
  it("reports at once, then at most once per interval, never losing the last activity", () => {
    const clock = new ManualClock();
    const reports: number[] = [];
    const t0 = clock.now();
    const activity = new ActivityReporter(clock, 10_000, () => reports.push(clock.now() - t0));
    activity.touch();
    clock.advance(1000);
    activity.touch();
    activity.touch();
    clock.advance(20_000);
    activity.touch();
    expect(reports).toEqual([0, 10_000, 21_000]);
    activity.stop();
    activity.touch();
    clock.advance(60_000);
    expect(reports).toHaveLength(3);
  });

  it("reports a keep-alive at once unless one went out within the last second", () => {
    const clock = new ManualClock();
    let reports = 0;
    const activity = new ActivityReporter(clock, 10_000, () => reports++);
    activity.keepAlive();
    clock.advance(500);
    activity.keepAlive();
    clock.advance(600);
    activity.keepAlive();
    expect(reports).toBe(2);
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
