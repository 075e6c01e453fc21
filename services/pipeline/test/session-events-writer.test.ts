import type { SessionsService } from "@avatar/contracts/sessions";
import { silentLogger } from "@avatar/runtime";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { type Client, Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { SESSION_EVENTS_LINGER_MS, SessionEventsWriter } from "../src/realtime/session-events-writer.js";
import { ManualClock } from "./manual-clock.js";

/** A worker's stored events of all its sessions, written together through AppendSessionEventsBatch. */

const flush = async () => {
  for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
};

function rig() {
  const clock = new ManualClock();
  const calls: string[][] = [];
  let failures: ConnectError[] = [];
  const sessions = {
    appendSessionEventsBatch: async (req: {
      sessions: { sessionId: string; events: { type: string }[] }[];
    }) => {
      const failure = failures.shift();
      calls.push(
        req.sessions.map(
          (s) => `${s.sessionId}: ${s.events.map((e) => e.type).join(",")}${failure ? " (failed)" : ""}`,
        ),
      );
      if (failure) throw failure;
      return { written: 0, unknownSessionIds: [] };
    },
  } as unknown as Client<typeof SessionsService>;
  const writer = new SessionEventsWriter(sessions, clock, silentLogger);
  const event = (type: string) => ({ id: "", type, payload: {}, createdAt: timestampFromMs(clock.now()) });
  return {
    clock,
    calls,
    writer,
    event,
    failNext: (...errs: ConnectError[]) => {
      failures = errs;
    },
  };
}

describe("SessionEventsWriter", () => {
  it("writes the events of every session that came within the linger in one call, each session's in order", async () => {
    const r = rig();
    const a = r.writer.forSession("a");
    const b = r.writer.forSession("b");
    a.write([r.event("a1")]);
    b.write([r.event("b1")]);
    a.write([r.event("a2"), r.event("a3")]);
    await flush();
    expect(r.calls).toEqual([]);
    r.clock.advance(SESSION_EVENTS_LINGER_MS);
    await flush();
    expect(r.calls).toEqual([["a: a1", "b: b1", "a: a2,a3"]]);
  });

  it("sends each payload as its JSON text, not as a Struct", async () => {
    const clock = new ManualClock();
    const sent: unknown[] = [];
    const sessions = {
      appendSessionEventsBatch: async (req: { sessions: { events: unknown[] }[] }) => {
        sent.push(...req.sessions.flatMap((s) => s.events));
        return { written: 0, unknownSessionIds: [] };
      },
    } as unknown as Client<typeof SessionsService>;
    const writer = new SessionEventsWriter(sessions, clock, silentLogger);
    const createdAt = timestampFromMs(clock.now());
    const payload = { turn_id: "t1", latency_ms: { first_audio: 12, first_llm_token: null } };
    writer.forSession("a").write([{ id: "e1", type: "session.turn_metrics", payload, createdAt }]);
    clock.advance(SESSION_EVENTS_LINGER_MS);
    await flush();
    expect(sent).toEqual([
      { id: "e1", type: "session.turn_metrics", createdAt, payloadJson: JSON.stringify(payload) },
    ]);
  });

  it("takes at most 1000 events a call", async () => {
    const r = rig();
    const a = r.writer.forSession("a");
    a.write(Array.from({ length: 1500 }, (_, i) => r.event(`e${i}`)));
    await flush();
    // A full batch goes without waiting; the rest lingers for more.
    expect(r.calls.map((c) => c[0]?.split(",").length)).toEqual([1000]);
    r.clock.advance(SESSION_EVENTS_LINGER_MS);
    await flush();
    expect(r.calls.map((c) => c[0]?.split(",").length)).toEqual([1000, 500]);
  });

  it("retries a failed call with the same events, and drops a refused one", async () => {
    const r = rig();
    r.failNext(new ConnectError("down", Code.Unavailable));
    r.writer.forSession("a").write([r.event("a1")]);
    r.clock.advance(SESSION_EVENTS_LINGER_MS);
    await flush();
    r.writer.forSession("b").write([r.event("b1")]);
    r.clock.advance(200);
    await flush();
    expect(r.calls).toEqual([["a: a1 (failed)"], ["a: a1"]]);
    r.clock.advance(SESSION_EVENTS_LINGER_MS);
    await flush();
    expect(r.calls.at(-1)).toEqual(["b: b1"]);
    r.failNext(new ConnectError("bad", Code.InvalidArgument));
    r.writer.forSession("c").write([r.event("c1")]);
    r.clock.advance(SESSION_EVENTS_LINGER_MS);
    await flush();
    r.clock.advance(60_000);
    await flush();
    expect(r.calls.filter((c) => c[0]?.startsWith("c"))).toEqual([["c: c1 (failed)"]]);
  });

  it("writes what waits at once when flushed (the worker stops)", async () => {
    const r = rig();
    r.writer.forSession("a").write([r.event("a1")]);
    await flush();
    let flushed = false;
    void r.writer.flush().then(() => {
      flushed = true;
    });
    await flush();
    expect(r.calls).toEqual([["a: a1"]]);
    expect(flushed).toBe(true);
  });
});
