import { SessionMode } from "@avatar/contracts/common";
import { MemoryService } from "@avatar/contracts/memory";
import { SessionState } from "@avatar/contracts/sessions";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { memoryService } from "../src/service.js";
import {
  clearMemories,
  type DirectCalls,
  direct,
  expectError,
  type Harness,
  harness,
  type MemoryTestDb,
  openMemoryDb,
  SPACE_A,
  SPACE_B,
  tripTranscript,
  uuid,
} from "./support.js";

/** ResolveMemory, the token endpoint's memory reference, called directly. */

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

const endedSession = (spaceId = SPACE_A, fields: { memoryId?: string } = {}) =>
  h.sessions.add({ id: uuid(), spaceId, ...fields }, tripTranscript);
const count = async (spaceId = SPACE_A) => (await memory.listMemories({ spaceId })).page?.count;
const createFrom = async (sessionId: string, spaceId = SPACE_A) =>
  (await memory.createMemory({ spaceId, sessionId })).memory?.id ?? "";

describe("session_memory_id", () => {
  it("resolves to the space's own memory", async () => {
    const id = await createFrom(endedSession().id);
    const res = await memory.resolveMemory({ spaceId: SPACE_A, sessionMemoryId: id });
    expect(res.memory?.id).toBe(id);
    expect(res.created).toBe(false);
    expect(res.memory?.sessionEpisodes).toHaveLength(1);
  });

  it.each([
    ["another space's memory", async () => createFrom(endedSession(SPACE_B).id, SPACE_B)],
    ["an unknown memory", async () => uuid()],
    ["an id that is not a UUID", async () => "m-1"],
  ])("answers 404 for %s", async (_name, id) => {
    await expectError(
      memory.resolveMemory({ spaceId: SPACE_A, sessionMemoryId: await id() }),
      Code.NotFound,
      "memory.session_memory_id",
    );
  });
});

describe("prev_session_id", () => {
  it("creates a memory from the session synchronously, then reuses it", async () => {
    const session = endedSession();
    const first = await memory.resolveMemory({ spaceId: SPACE_A, prevSessionId: session.id });
    expect(first.created).toBe(true);
    expect(first.memory?.sessionEpisodes.map((e) => [e.sessionId, e.sequenceNum])).toEqual([[session.id, 1]]);
    const again = await memory.resolveMemory({ spaceId: SPACE_A, prevSessionId: session.id });
    expect(again).toMatchObject({ created: false, memory: { id: first.memory?.id } });
    expect(await count()).toBe(1);
  });

  it("reuses the memory created from the session by CreateMemory (the first, when there are several)", async () => {
    const session = endedSession();
    const id = await createFrom(session.id);
    await createFrom(session.id);
    const res = await memory.resolveMemory({ spaceId: SPACE_A, prevSessionId: session.id });
    expect(res).toMatchObject({ created: false, memory: { id } });
  });

  it("reuses the memory the previous session ran with, even before its episode was added", async () => {
    const id = await createFrom(endedSession().id);
    const ranWith = endedSession(SPACE_A, { memoryId: id });
    const res = await memory.resolveMemory({ spaceId: SPACE_A, prevSessionId: ranWith.id });
    expect(res).toMatchObject({ created: false, memory: { id } });
    expect(await count()).toBe(1);
  });

  it("creates one memory when several resolves of one session race", async () => {
    const session = endedSession();
    const results = await Promise.all(
      Array.from({ length: 5 }, () => memory.resolveMemory({ spaceId: SPACE_A, prevSessionId: session.id })),
    );
    expect(new Set(results.map((r) => r.memory?.id)).size).toBe(1);
    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect(await count()).toBe(1);
  });

  it.each([
    ["another space's session", () => endedSession(SPACE_B).id],
    ["an unknown session", () => uuid()],
    ["an id that is not a UUID", () => "s-1"],
  ])("answers 404 for %s", async (_name, id) => {
    await expectError(
      memory.resolveMemory({ spaceId: SPACE_A, prevSessionId: id() }),
      Code.NotFound,
      "memory.prev_session_id",
    );
  });

  it.each([
    ["has not ended", { state: SessionState.STARTED }, tripTranscript],
    ["is LITE", { mode: SessionMode.LITE }, tripTranscript],
    ["has no transcript", {}, []],
  ])("answers 400 when a memory would be created from a session that %s", async (_n, fields, transcript) => {
    const session = h.sessions.add({ id: uuid(), spaceId: SPACE_A, ...fields }, transcript);
    await expectError(
      memory.resolveMemory({ spaceId: SPACE_A, prevSessionId: session.id }),
      Code.InvalidArgument,
      "memory.prev_session_id",
    );
    expect(await count()).toBe(0);
  });
});

describe("both ids", () => {
  it("resolve to that memory when they name the same one", async () => {
    const session = endedSession();
    const id = await createFrom(session.id);
    const res = await memory.resolveMemory({
      spaceId: SPACE_A,
      prevSessionId: session.id,
      sessionMemoryId: id,
    });
    expect(res).toMatchObject({ created: false, memory: { id } });
  });

  it("answer 400 when they resolve to different memories", async () => {
    const a = endedSession();
    await createFrom(a.id);
    const other = await createFrom(endedSession().id);
    await expectError(
      memory.resolveMemory({ spaceId: SPACE_A, prevSessionId: a.id, sessionMemoryId: other }),
      Code.InvalidArgument,
      "memory",
    );
  });

  it("answer 400 without creating anything when prev_session_id has no memory yet", async () => {
    const other = await createFrom(endedSession().id);
    const fresh = endedSession();
    await expectError(
      memory.resolveMemory({ spaceId: SPACE_A, prevSessionId: fresh.id, sessionMemoryId: other }),
      Code.InvalidArgument,
      "memory",
    );
    expect(await count()).toBe(1);
  });

  it("check session_memory_id first: another space's memory is a 404", async () => {
    const foreign = await createFrom(endedSession(SPACE_B).id, SPACE_B);
    await expectError(
      memory.resolveMemory({ spaceId: SPACE_A, prevSessionId: endedSession().id, sessionMemoryId: foreign }),
      Code.NotFound,
      "memory.session_memory_id",
    );
  });
});

it("answers 400 when the reference names neither id", async () => {
  await expectError(memory.resolveMemory({ spaceId: SPACE_A }), Code.InvalidArgument, "memory");
  await expectError(
    memory.resolveMemory({ spaceId: SPACE_A, prevSessionId: "", sessionMemoryId: "" }),
    Code.InvalidArgument,
  );
});
