import { SessionMode } from "@avatar/contracts/common";
import { MemoryCreatedSchema, MemoryService, MemoryType } from "@avatar/contracts/memory";
import { SessionState } from "@avatar/contracts/sessions";
import { fromBinary } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { extractiveSummary } from "../src/extractive-summarizer.js";
import { memoryService } from "../src/service.js";
import {
  clearMemories,
  type DirectCalls,
  direct,
  expectError,
  type Harness,
  harness,
  linesOf,
  type MemoryTestDb,
  openMemoryDb,
  SPACE_A,
  SPACE_B,
  tripTranscript,
  uuid,
} from "./support.js";

/** MemoryService called directly (no transport) on a real database, with test doubles of its peers. */

let t: MemoryTestDb;
let h: Harness;
let memory: DirectCalls<typeof MemoryService>;

beforeAll(async () => {
  t = await openMemoryDb();
});
afterAll(async () => {
  await t.close();
});
beforeEach(async () => {
  await clearMemories(t.db);
  h = harness(t.db);
  memory = direct(MemoryService, memoryService(h.ctx));
});

const summaryOf = (rows: string[][]) => extractiveSummary(linesOf(rows));

/** An ended FULL session of `spaceId` with a transcript (the double pages it two entries at a time). */
function endedSession(spaceId = SPACE_A, transcript = tripTranscript, fields: { memoryId?: string } = {}) {
  return h.sessions.add({ id: uuid(), spaceId, ...fields }, transcript);
}

const conversation = (topic: string) => [
  ["user", `I would like to talk about ${topic} today, mostly ${topic} prices.`],
  ["avatar", `Happy to help with ${topic}. The ${topic} prices went up this year.`],
];

describe("CreateMemory", () => {
  it("creates a session memory whose first episode summarises the whole transcript", async () => {
    const session = endedSession();
    const { memory: m } = await memory.createMemory({
      spaceId: SPACE_A,
      memoryType: MemoryType.SESSION,
      sessionId: session.id,
    });
    expect(m?.memoryType).toBe(MemoryType.SESSION);
    expect(m?.spaceId).toBe(SPACE_A);
    const summary = summaryOf(tripTranscript);
    expect(m?.sessionEpisodes.map((e) => [e.sessionId, e.sequenceNum, e.summary])).toEqual([
      [session.id, 1, summary],
    ]);
    // The summary covers entries beyond the first page of the transcript.
    expect(summary).toContain("Noted: small hotels");
    expect(m?.memoryContent).toMatch(/^Session 1 \(\d{4}-\d{2}-\d{2}\):\n/);
    expect(m?.memoryContent).toContain(summary);
    expect(m?.memoryContentPreview).toBe(
      `${Array.from(m?.memoryContent ?? "")
        .slice(0, 200)
        .join("")
        .trimEnd()}…`,
    );
    expect(m?.createdAt).toBeDefined();
    expect(m?.updatedAt).toBeDefined();
    expect(await memory.getMemory({ spaceId: SPACE_A, memoryId: m?.id })).toEqual({
      $typeName: "avatar.memory.v1.GetMemoryResponse",
      memory: m,
    });
    // Its memory.created event waits in the outbox, written with it.
    const events = await t.db
      .selectFrom("outbox")
      .selectAll()
      .where("msg_id", "=", `memory.created.${m?.id}`)
      .execute();
    expect(events).toHaveLength(1);
    const event = fromBinary(MemoryCreatedSchema, new Uint8Array(events[0]?.payload ?? []));
    expect([event.memory?.id, event.memory?.spaceId, event.sessionId]).toEqual([m?.id, SPACE_A, session.id]);
    expect(events[0]?.subject).toBe("events.memory.created");
  });

  it("accepts an unspecified type as session, and makes a new memory on each call", async () => {
    const session = endedSession();
    const a = await memory.createMemory({ spaceId: SPACE_A, sessionId: session.id });
    const b = await memory.createMemory({ spaceId: SPACE_A, sessionId: session.id });
    expect(a.memory?.id).not.toBe(b.memory?.id);
    expect((await memory.listMemories({ spaceId: SPACE_A })).page?.count).toBe(2);
  });

  it.each([
    ["another space's session", () => endedSession(SPACE_B).id],
    ["an unknown session", () => uuid()],
    ["an id that is not a UUID", () => "not-a-uuid"],
  ])("answers 404 for %s", async (_name, sessionId) => {
    await expectError(
      memory.createMemory({ spaceId: SPACE_A, sessionId: sessionId() }),
      Code.NotFound,
      "session_id",
    );
  });

  it.each([
    ["has not ended", { state: SessionState.STARTED }, tripTranscript, /has not ended/],
    ["was never started", { state: SessionState.CREATED }, tripTranscript, /has not ended/],
    ["is a LITE session", { mode: SessionMode.LITE }, tripTranscript, /not a FULL session/],
    ["has no transcript", {}, [], /no transcript entries/],
    ["has only empty transcript entries", {}, [["user", "  "]], /no transcript entries/],
  ])("answers 400 when the session %s", async (_name, fields, transcript, message) => {
    const session = h.sessions.add({ id: uuid(), spaceId: SPACE_A, ...fields }, transcript);
    const err = await expectError(
      memory.createMemory({ spaceId: SPACE_A, sessionId: session.id }),
      Code.InvalidArgument,
      "session_id",
    );
    expect(err.rawMessage).toMatch(message);
    expect((await memory.listMemories({ spaceId: SPACE_A })).page?.count).toBe(0);
  });

  it("answers 400 for a memory type it does not know", async () => {
    await expectError(
      memory.createMemory({ spaceId: SPACE_A, sessionId: endedSession().id, memoryType: 7 as MemoryType }),
      Code.InvalidArgument,
      "memory_type",
    );
  });
});

describe("ListMemories", () => {
  it("pages through the space's memories, newest first, with previews and no content", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const s = h.sessions.add({ id: uuid(), spaceId: SPACE_A }, conversation(`topic${i}`));
      ids.push((await memory.createMemory({ spaceId: SPACE_A, sessionId: s.id })).memory?.id ?? "");
    }
    await memory.createMemory({ spaceId: SPACE_B, sessionId: endedSession(SPACE_B).id });
    const newestFirst = [...ids].reverse();

    const first = await memory.listMemories({ spaceId: SPACE_A, page: { page: 1, pageSize: 2 } });
    expect(first.memories.map((m) => m.id)).toEqual(newestFirst.slice(0, 2));
    expect(first.page).toMatchObject({ count: 5, page: 1, pageSize: 2 });
    const last = await memory.listMemories({
      spaceId: SPACE_A,
      memoryType: MemoryType.SESSION,
      page: { page: 3, pageSize: 2 },
    });
    expect(last.memories.map((m) => m.id)).toEqual(newestFirst.slice(4));
    expect(
      (await memory.listMemories({ spaceId: SPACE_A, page: { page: 4, pageSize: 2 } })).memories,
    ).toEqual([]);

    const item = first.memories[0];
    expect(item?.memoryContent).toBe("");
    expect(item?.sessionEpisodes).toEqual([]);
    expect(item?.memoryContentPreview).toContain("topic4");
    const full = (await memory.getMemory({ spaceId: SPACE_A, memoryId: item?.id })).memory;
    expect(item?.memoryContentPreview).toBe(full?.memoryContentPreview);
  });

  it("shows a short content whole, and cuts a long one to 200 characters", async () => {
    const short = await memory.createMemory({
      spaceId: SPACE_A,
      sessionId: h.sessions.add({ id: uuid(), spaceId: SPACE_A }, [["user", "Call me Ana."]]).id,
    });
    expect(short.memory?.memoryContentPreview).toBe(short.memory?.memoryContent);
    const long = await memory.createMemory({ spaceId: SPACE_A, sessionId: endedSession().id });
    const preview = long.memory?.memoryContentPreview ?? "";
    expect(Array.from(preview).length).toBeGreaterThan(190);
    expect(Array.from(preview).length).toBeLessThanOrEqual(201);
    expect(preview.endsWith("…")).toBe(true);
    expect(long.memory?.memoryContent.startsWith(preview.slice(0, -1))).toBe(true);
  });
});

describe("GetMemory and DeleteMemory", () => {
  it.each([
    [
      "another space's memory",
      async () =>
        (await memory.createMemory({ spaceId: SPACE_B, sessionId: endedSession(SPACE_B).id })).memory?.id ??
        "",
    ],
    ["an unknown memory", async () => uuid()],
    ["an id that is not a UUID", async () => "memory-1"],
  ])("answers 404 for %s", async (_name, memoryId) => {
    const id = await memoryId();
    await expectError(memory.getMemory({ spaceId: SPACE_A, memoryId: id }), Code.NotFound, "memory_id");
    await expectError(memory.deleteMemory({ spaceId: SPACE_A, memoryId: id }), Code.NotFound, "memory_id");
  });

  it("deletes the memory with its episodes; a second delete is a 404", async () => {
    const { memory: m } = await memory.createMemory({ spaceId: SPACE_A, sessionId: endedSession().id });
    await memory.addSessionEpisode({ memoryId: m?.id, sessionId: endedSession().id });
    expect(
      await t.db
        .selectFrom("session_episodes")
        .select("session_id")
        .where("memory_id", "=", m?.id ?? "")
        .execute(),
    ).toHaveLength(2);

    await memory.deleteMemory({ spaceId: SPACE_A, memoryId: m?.id });
    expect(await t.db.selectFrom("session_episodes").selectAll().execute()).toEqual([]);
    await expectError(memory.getMemory({ spaceId: SPACE_A, memoryId: m?.id }), Code.NotFound);
    await expectError(memory.deleteMemory({ spaceId: SPACE_A, memoryId: m?.id }), Code.NotFound, "memory_id");
  });

  it("leaves another space's memory alone when asked to delete it", async () => {
    const { memory: m } = await memory.createMemory({
      spaceId: SPACE_B,
      sessionId: endedSession(SPACE_B).id,
    });
    await expectError(memory.deleteMemory({ spaceId: SPACE_A, memoryId: m?.id }), Code.NotFound);
    expect((await memory.getMemory({ spaceId: SPACE_B, memoryId: m?.id })).memory?.id).toBe(m?.id);
  });
});

describe("AddSessionEpisode", () => {
  it("numbers episodes in the order they are added and rolls the content up from all of them", async () => {
    const first = h.sessions.add({ id: uuid(), spaceId: SPACE_A }, conversation("gardening"));
    const { memory: m } = await memory.createMemory({ spaceId: SPACE_A, sessionId: first.id });
    const second = h.sessions.add({ id: uuid(), spaceId: SPACE_A, memoryId: m?.id }, conversation("cycling"));
    const third = h.sessions.add({ id: uuid(), spaceId: SPACE_A, memoryId: m?.id }, conversation("baking"));

    const added = await memory.addSessionEpisode({ memoryId: m?.id, sessionId: second.id });
    expect(added.added).toBe(true);
    const after = (await memory.addSessionEpisode({ memoryId: m?.id, sessionId: third.id })).memory;

    expect(after?.sessionEpisodes.map((e) => [e.sessionId, e.sequenceNum])).toEqual([
      [first.id, 1],
      [second.id, 2],
      [third.id, 3],
    ]);
    const content = after?.memoryContent ?? "";
    expect(content.indexOf("Session 1 (")).toBeLessThan(content.indexOf("gardening"));
    expect(content.indexOf("gardening")).toBeLessThan(content.indexOf("Session 2 ("));
    expect(content.indexOf("Session 2 (")).toBeLessThan(content.indexOf("cycling"));
    expect(content.indexOf("cycling")).toBeLessThan(content.indexOf("Session 3 ("));
    expect(content.indexOf("Session 3 (")).toBeLessThan(content.indexOf("baking"));
    expect(after?.updatedAt && m?.updatedAt && after.updatedAt.seconds >= m.updatedAt.seconds).toBe(true);
  });

  it("adds a session's episode once, however often it is asked", async () => {
    const { memory: m } = await memory.createMemory({ spaceId: SPACE_A, sessionId: endedSession().id });
    const next = endedSession();
    const calls = await Promise.all(
      Array.from({ length: 4 }, () => memory.addSessionEpisode({ memoryId: m?.id, sessionId: next.id })),
    );
    expect(calls.filter((c) => c.added)).toHaveLength(1);
    const again = await memory.addSessionEpisode({ memoryId: m?.id, sessionId: next.id });
    expect(again.added).toBe(false);
    expect(again.memory?.sessionEpisodes.map((e) => e.sequenceNum)).toEqual([1, 2]);
    // Adding the seed session again changes nothing either.
    expect(
      (await memory.addSessionEpisode({ memoryId: m?.id, sessionId: m?.sessionEpisodes[0]?.sessionId }))
        .added,
    ).toBe(false);
  });

  it("gives concurrent episodes of different sessions distinct, consecutive numbers", async () => {
    const { memory: m } = await memory.createMemory({ spaceId: SPACE_A, sessionId: endedSession().id });
    const sessions = Array.from({ length: 6 }, () => endedSession());
    await Promise.all(sessions.map((s) => memory.addSessionEpisode({ memoryId: m?.id, sessionId: s.id })));
    const { memory: after } = await memory.getMemory({ spaceId: SPACE_A, memoryId: m?.id });
    expect(after?.sessionEpisodes.map((e) => e.sequenceNum)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(new Set(after?.sessionEpisodes.map((e) => e.sessionId)).size).toBe(7);
    expect(after?.memoryContent).toContain("Session 7 (");
  });

  it("refuses a session of another space (404), a LITE one (400) and one without transcript (400)", async () => {
    const { memory: m } = await memory.createMemory({ spaceId: SPACE_A, sessionId: endedSession().id });
    await expectError(
      memory.addSessionEpisode({ memoryId: m?.id, sessionId: endedSession(SPACE_B).id }),
      Code.NotFound,
      "session_id",
    );
    const lite = h.sessions.add({ id: uuid(), spaceId: SPACE_A, mode: SessionMode.LITE }, tripTranscript);
    await expectError(
      memory.addSessionEpisode({ memoryId: m?.id, sessionId: lite.id }),
      Code.InvalidArgument,
      "session_id",
    );
    const silent = h.sessions.add({ id: uuid(), spaceId: SPACE_A }, []);
    await expectError(
      memory.addSessionEpisode({ memoryId: m?.id, sessionId: silent.id }),
      Code.InvalidArgument,
      "session_id",
    );
    await expectError(
      memory.addSessionEpisode({ memoryId: uuid(), sessionId: endedSession().id }),
      Code.NotFound,
      "memory_id",
    );
    await expectError(
      memory.addSessionEpisode({ memoryId: m?.id, sessionId: "x" }),
      Code.NotFound,
      "session_id",
    );
    expect(
      (await memory.getMemory({ spaceId: SPACE_A, memoryId: m?.id })).memory?.sessionEpisodes,
    ).toHaveLength(1);
  });
});
