import { randomUUID } from "node:crypto";
import { SessionListType, SessionState, type TranscriptEntry } from "@avatar/contracts/sessions";
import { consumeEvent, errorDetailOf, topics } from "@avatar/runtime";
import type { JsonObject } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readTranscript } from "../src/transcript.js";
import {
  config,
  eventually,
  failure,
  type Harness,
  harness,
  ms,
  newSession,
  openSessionsDb,
  type SessionsTestDb,
} from "./support.js";

/** Transcripts, stored events, lists and credits through SessionsService. */

let t: SessionsTestDb;
let h: Harness;

beforeAll(async () => {
  t = await openSessionsDb();
  h = harness(t.db);
});
afterAll(async () => {
  await t?.close();
});

const entry = (absolute: number, text: string, extra: Partial<TranscriptEntry> = {}) => ({
  role: "user",
  transcript: text,
  absoluteTimestamp: BigInt(absolute),
  relativeTimestamp: 0n,
  entryId: text,
  ...extra,
});

describe("transcript", () => {
  it("filters on absolute_timestamp (start inclusive, end exclusive), oldest first", async () => {
    const spaceId = randomUUID();
    const s = await newSession(h.client, { spaceId });
    await h.client.appendTranscript({
      sessionId: s.id,
      entries: [entry(3000, "c"), entry(1000, "a"), entry(2000, "b", { role: "avatar" })],
    });
    const all = await h.client.getTranscript({ spaceId, sessionId: s.id });
    expect(all.entries.map((e) => e.transcript)).toEqual(["a", "b", "c"]);
    expect(all.nextTimestamp).toBe(3001n);
    expect(all.sessionActive).toBe(true);
    const window = await h.client.getTranscript({
      spaceId,
      sessionId: s.id,
      startTimestamp: 1000n,
      endTimestamp: 3000n,
    });
    expect(window.entries.map((e) => e.transcript)).toEqual(["a", "b"]);
    expect(window.nextTimestamp).toBe(2001n);
  });

  it("polls with next_timestamp: nothing new answers the start passed, new entries come next", async () => {
    const spaceId = randomUUID();
    const s = await newSession(h.client, { spaceId });
    await h.client.appendTranscript({ sessionId: s.id, entries: [entry(1000, "one")] });
    const first = await h.client.getTranscript({ spaceId, sessionId: s.id, startTimestamp: 0n });
    expect(first.nextTimestamp).toBe(1001n);
    const idle = await h.client.getTranscript({
      spaceId,
      sessionId: s.id,
      startTimestamp: first.nextTimestamp,
    });
    expect(idle.entries).toEqual([]);
    expect(idle.nextTimestamp).toBe(1001n);
    const empty = await newSession(h.client, { spaceId });
    expect((await h.client.getTranscript({ spaceId, sessionId: empty.id })).nextTimestamp).toBe(0n);
    await h.client.appendTranscript({ sessionId: s.id, entries: [entry(1001, "two"), entry(1500, "three")] });
    const next = await h.client.getTranscript({
      spaceId,
      sessionId: s.id,
      startTimestamp: idle.nextTimestamp,
    });
    expect(next.entries.map((e) => e.transcript)).toEqual(["two", "three"]);
    expect(next.nextTimestamp).toBe(1501n);
  });

  it("writes an entry once however often it is sent, and announces what was new", async () => {
    const spaceId = randomUUID();
    const s = await newSession(h.client, { spaceId });
    const seen: string[] = [];
    const sub = await consumeEvent(h.bus, topics.transcriptWritten, `t-${randomUUID()}`, (e) => {
      if (e.sessionId === s.id) seen.push(...e.entries.map((x) => x.transcript));
    });
    expect(
      (await h.client.appendTranscript({ sessionId: s.id, entries: [entry(1, "x"), entry(2, "y")] })).written,
    ).toBe(2);
    expect(
      (await h.client.appendTranscript({ sessionId: s.id, entries: [entry(1, "x"), entry(3, "z")] })).written,
    ).toBe(1);
    expect((await h.client.getTranscript({ spaceId, sessionId: s.id })).entries).toHaveLength(3);
    await eventually(async () => expect(seen.sort()).toEqual(["x", "y", "z"]));
    await sub.unsubscribe();
  });

  it("fills the relative timestamp from the start and answers session_active false once ended", async () => {
    const spaceId = randomUUID();
    await h.client.grantCredits({ spaceId, amount: "10" });
    const s = await newSession(h.client, { spaceId });
    const started = await h.client.startSession({ spaceId, sessionId: s.id });
    const startMs = ms(started.session?.startedAt);
    await h.client.appendTranscript({ sessionId: s.id, entries: [entry(startMs + 2500, "hi")] });
    await h.client.stopSession({ spaceId, sessionId: s.id });
    const res = await h.client.getTranscript({ spaceId, sessionId: s.id });
    expect(res.sessionActive).toBe(false);
    expect(res.entries[0]?.relativeTimestamp).toBe(2500n);
  });

  it("refuses unknown roles and unknown sessions; another space reads NotFound", async () => {
    const spaceId = randomUUID();
    const s = await newSession(h.client, { spaceId });
    const bad = await failure(
      h.client.appendTranscript({ sessionId: s.id, entries: [entry(1, "a", { role: "system" })] }),
    );
    expect(bad.code).toBe(Code.InvalidArgument);
    expect((await failure(h.client.appendTranscript({ sessionId: randomUUID(), entries: [] }))).code).toBe(
      Code.NotFound,
    );
    expect((await failure(h.client.getTranscript({ spaceId: randomUUID(), sessionId: s.id }))).code).toBe(
      Code.NotFound,
    );
  });

  it("never ends a page inside one millisecond", async () => {
    const spaceId = randomUUID();
    const s = await newSession(h.client, { spaceId });
    await h.client.appendTranscript({
      sessionId: s.id,
      entries: [entry(1, "a"), entry(2, "b1"), entry(2, "b2"), entry(3, "c")],
    });
    const page = await readTranscript(t.db, s.id, 0n, undefined, 2);
    expect(page.entries.map((e) => e.transcript)).toEqual(["a"]);
    expect(page.next).toBe(2n);
    const rest = await readTranscript(t.db, s.id, page.next, undefined, 2);
    expect(rest.entries.map((e) => e.transcript)).toEqual(["b1", "b2"]);
    const crowded = await readTranscript(t.db, s.id, 2n, undefined, 1);
    expect(crowded.entries.map((e) => e.transcript)).toEqual(["b1", "b2"]);
  });
});

describe("session events", () => {
  it("stores lifecycle and appended events; delete removes events and transcript, the record stays", async () => {
    const spaceId = randomUUID();
    const s = await newSession(h.client, { spaceId });
    const id = randomUUID();
    const ev = { id, type: "session.state_updated", payload: { state: "connected" } };
    expect((await h.client.appendSessionEvents({ sessionId: s.id, events: [ev, ev] })).written).toBe(1);
    await h.client.appendTranscript({ sessionId: s.id, entries: [entry(1, "a"), entry(2, "b")] });
    const listed = await h.client.listSessionEvents({ spaceId, sessionId: s.id });
    expect(listed.events.map((e) => [e.type, e.payload])).toEqual([
      ["session.created", {}],
      ["session.state_updated", { state: "connected" }],
    ]);
    // The notice is the record's: the session's id and creation time.
    expect(listed.events[0]).toMatchObject({ id: s.id, sessionId: s.id, createdAt: s.createdAt });
    expect(
      (await failure(h.client.deleteSessionEvents({ spaceId: randomUUID(), sessionId: s.id }))).code,
    ).toBe(Code.NotFound);
    const deleted = await h.client.deleteSessionEvents({ spaceId, sessionId: s.id });
    expect(deleted).toMatchObject({ deletedEvents: 2, deletedTranscriptEntries: 2 });
    expect((await h.client.listSessionEvents({ spaceId, sessionId: s.id })).events).toEqual([]);
    expect((await h.client.getTranscript({ spaceId, sessionId: s.id })).entries).toEqual([]);
    expect((await h.client.getSession({ spaceId, sessionId: s.id })).session?.state).toBe(
      SessionState.CREATED,
    );
    const again = await h.client.deleteSessionEvents({ spaceId, sessionId: s.id });
    expect(again).toMatchObject({ deletedEvents: 0, deletedTranscriptEntries: 0 });

    // What comes after a delete is kept; the session.created notice does not come back.
    await h.client.appendSessionEvents({ sessionId: s.id, events: [{ type: "later", payload: {} }] });
    const after = await h.client.listSessionEvents({ spaceId, sessionId: s.id });
    expect(after.events.map((e) => e.type)).toEqual(["later"]);
    const third = await h.client.deleteSessionEvents({ spaceId, sessionId: s.id });
    expect(third).toMatchObject({ deletedEvents: 1, deletedTranscriptEntries: 0 });
  });

  it("refuses events without a type or with a malformed id", async () => {
    const s = await newSession(h.client, { spaceId: randomUUID() });
    expect(
      (await failure(h.client.appendSessionEvents({ sessionId: s.id, events: [{ type: "" }] }))).code,
    ).toBe(Code.InvalidArgument);
    expect(
      (await failure(h.client.appendSessionEvents({ sessionId: s.id, events: [{ id: "x", type: "a" }] })))
        .code,
    ).toBe(Code.InvalidArgument);
  });

  it("stores a batch of several sessions' events in order, once each, and names the unknown sessions", async () => {
    const spaceId = randomUUID();
    const [a, b] = [await newSession(h.client, { spaceId }), await newSession(h.client, { spaceId })];
    const nobody = randomUUID();
    const ev = (type: string, id = randomUUID()) => ({ id, type, payload: { type } });
    const repeated = ev("a.2");
    const res = await h.client.appendSessionEventsBatch({
      sessions: [
        { sessionId: a.id, events: [ev("a.1"), repeated] },
        { sessionId: nobody, events: [ev("lost")] },
        { sessionId: b.id.toUpperCase(), events: [ev("b.1")] },
        { sessionId: a.id, events: [repeated, ev("a.3")] },
      ],
    });
    expect(res.written).toBe(4);
    expect(res.unknownSessionIds).toEqual([nobody]);
    const types = async (sessionId: string) =>
      (await h.client.listSessionEvents({ spaceId, sessionId })).events.map((e) => e.type);
    expect(await types(a.id)).toEqual(["session.created", "a.1", "a.2", "a.3"]);
    expect(await types(b.id)).toEqual(["session.created", "b.1"]);
    expect((await h.client.appendSessionEventsBatch({ sessions: [] })).written).toBe(0);
  });

  it("stores a payload sent as JSON text as the object it spells, read back as any payload", async () => {
    const spaceId = randomUUID();
    const s = await newSession(h.client, { spaceId });
    const payload = {
      turn_id: "t",
      interrupted: false,
      latency_ms: { first_audio: 12, first_llm_token: null },
    };
    const res = await h.client.appendSessionEventsBatch({
      sessions: [{ sessionId: s.id, events: [{ type: "as.text", payloadJson: JSON.stringify(payload) }] }],
    });
    expect(res.written).toBe(1);
    const [, stored] = (await h.client.listSessionEvents({ spaceId, sessionId: s.id })).events;
    expect(stored?.type).toBe("as.text");
    expect(stored?.payload).toEqual(payload);
    expect(stored?.payloadJson).toBe("");
  });

  it("refuses a batch with a malformed session id or event, or more than 1000 events, storing none", async () => {
    const spaceId = randomUUID();
    const s = await newSession(h.client, { spaceId });
    const good = { sessionId: s.id, events: [{ type: "kept?" }] };
    type Event = { id?: string; type: string; payload?: JsonObject; payloadJson?: string };
    const refused = async (sessions: { sessionId: string; events: Event[] }[]) => {
      const err = await failure(h.client.appendSessionEventsBatch({ sessions: [good, ...sessions] }));
      expect(err.code).toBe(Code.InvalidArgument);
    };
    await refused([{ sessionId: "not-a-uuid", events: [{ type: "a" }] }]);
    await refused([{ sessionId: s.id, events: [{ type: "" }] }]);
    await refused([{ sessionId: s.id, events: [{ id: "x", type: "a" }] }]);
    await refused([{ sessionId: s.id, events: Array.from({ length: 1000 }, () => ({ type: "many" })) }]);
    for (const payloadJson of ["{", "[1]", "null", "7", '"text"']) {
      await refused([{ sessionId: s.id, events: [{ type: "a", payloadJson }] }]);
    }
    await refused([{ sessionId: s.id, events: [{ type: "a", payload: { a: 1 }, payloadJson: '{"a":1}' }] }]);
    const listed = await h.client.listSessionEvents({ spaceId, sessionId: s.id });
    expect(listed.events.map((e) => e.type)).toEqual(["session.created"]);
  });
});

describe("list", () => {
  it("lists a space's sessions newest first, by type and filters, paginated", async () => {
    const spaceId = randomUUID();
    await h.client.grantCredits({ spaceId, amount: "100" });
    const avatarId = randomUUID();
    const contextId = randomUUID();
    const embedId = randomUUID();
    const a = await newSession(h.client, { spaceId });
    const b = await newSession(h.client, { spaceId, config: config({ avatarId, contextId }) });
    const c = await newSession(h.client, { spaceId, config: config({ embedId }) });
    await h.client.startSession({ spaceId, sessionId: b.id });
    await h.client.stopSession({ spaceId, sessionId: a.id });
    await newSession(h.client, { spaceId: randomUUID() });

    const ids = async (req: {
      type?: SessionListType;
      avatarId?: string;
      contextId?: string;
      embedId?: string;
    }) => (await h.client.listSessions({ spaceId, ...req })).sessions.map((s) => s.id);
    expect(await ids({})).toEqual([c.id, b.id, a.id]);
    expect(await ids({ type: SessionListType.ACTIVE })).toEqual([c.id, b.id]);
    expect(await ids({ type: SessionListType.HISTORIC })).toEqual([a.id]);
    expect(await ids({ avatarId })).toEqual([b.id]);
    expect(await ids({ contextId })).toEqual([b.id]);
    expect(await ids({ embedId })).toEqual([c.id]);
    expect(await ids({ avatarId: randomUUID() })).toEqual([]);
    const page2 = await h.client.listSessions({ spaceId, page: { page: 2, pageSize: 2 } });
    expect(page2.sessions.map((s) => s.id)).toEqual([a.id]);
    expect(page2.page).toMatchObject({ count: 3, page: 2, pageSize: 2 });
    const err = await failure(h.client.listSessions({ spaceId, avatarId: "nope" }));
    expect(errorDetailOf(err)?.field).toBe("avatar_id");
  });
});

describe("credits", () => {
  it("grants, counting a repeated idempotency key once", async () => {
    const spaceId = randomUUID();
    expect((await h.client.getCredits({ spaceId })).creditsLeft).toBe("0");
    expect((await h.client.grantCredits({ spaceId, amount: "10.5", idempotencyKey: "k1" })).creditsLeft).toBe(
      "10.5",
    );
    expect(
      (await h.client.grantCredits({ spaceId, amount: "10.50", idempotencyKey: "k1" })).creditsLeft,
    ).toBe("10.5");
    const results = await Promise.all(
      Array.from({ length: 5 }, () => h.client.grantCredits({ spaceId, amount: "1", idempotencyKey: "k2" })),
    );
    expect(results.map((r) => r.creditsLeft)).toContain("11.5");
    expect((await h.client.getCredits({ spaceId })).creditsLeft).toBe("11.5");
    // Without a key every grant counts.
    await h.client.grantCredits({ spaceId, amount: "0.25" });
    await h.client.grantCredits({ spaceId, amount: "0.25" });
    expect((await h.client.getCredits({ spaceId })).creditsLeft).toBe("12");
    const reused = await failure(h.client.grantCredits({ spaceId, amount: "2", idempotencyKey: "k1" }));
    expect(reused.code).toBe(Code.FailedPrecondition);
    const ledger = await h.client.listLedgerEntries({ spaceId });
    expect(ledger.entries.map((e) => [e.kind, e.amount])).toEqual([
      ["grant", "0.25"],
      ["grant", "0.25"],
      ["grant", "1"],
      ["grant", "10.5"],
    ]);
  });

  it("refuses amounts that are not positive decimals", async () => {
    const spaceId = randomUUID();
    for (const amount of ["0", "-1", "abc", "1.23456", "", "1e3", "0.0000"]) {
      const err = await failure(h.client.grantCredits({ spaceId, amount }));
      expect(err.code, amount).toBe(Code.InvalidArgument);
      expect(errorDetailOf(err)?.field).toBe("amount");
    }
    expect((await failure(h.client.getCredits({ spaceId: "x" }))).code).toBe(Code.InvalidArgument);
  });

  it("lists the ledger of one session", async () => {
    const spaceId = randomUUID();
    await h.client.grantCredits({ spaceId, amount: "10" });
    const s = await newSession(h.client, { spaceId });
    await h.client.startSession({ spaceId, sessionId: s.id });
    const res = await h.client.listLedgerEntries({ spaceId, sessionId: s.id });
    expect(res.entries.map((e) => [e.kind, e.amount, e.minuteIndex])).toEqual([
      ["charge", "-2", 0],
      ["escrow_release", "2", 0],
      ["escrow", "-2", 0],
    ]);
    expect(res.page?.count).toBe(3);
  });
});
