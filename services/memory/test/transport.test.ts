import { MemoryService, MemoryType } from "@avatar/contracts/memory";
import { errorDetailOf } from "@avatar/runtime";
import { type Client, Code, createClient, createRouterTransport } from "@connectrpc/connect";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { memoryService } from "../src/service.js";
import {
  clearMemories,
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

/** MemoryService behind createRouterTransport: requests, answers and errors go through Connect's encoding. */

let t: MemoryTestDb;
let h: Harness;
let client: Client<typeof MemoryService>;

beforeAll(async () => {
  t = await openMemoryDb();
});
afterAll(async () => {
  await t.close();
});
beforeEach(async () => {
  await clearMemories(t.db);
  h = harness(t.db);
  client = createClient(
    MemoryService,
    createRouterTransport(({ service }) => service(MemoryService, memoryService(h.ctx))),
  );
});

const session = (spaceId = SPACE_A, transcript = tripTranscript, memoryId?: string) =>
  h.sessions.add({ id: uuid(), spaceId, ...(memoryId ? { memoryId } : {}) }, transcript);

describe("over a router transport", () => {
  it("creates, lists, reads and deletes a memory", async () => {
    const s = session();
    const { memory } = await client.createMemory({
      spaceId: SPACE_A,
      memoryType: MemoryType.SESSION,
      sessionId: s.id,
    });
    expect(memory?.sessionEpisodes.map((e) => e.sessionId)).toEqual([s.id]);

    const list = await client.listMemories({ spaceId: SPACE_A, memoryType: MemoryType.SESSION });
    expect(list.memories.map((m) => m.id)).toEqual([memory?.id]);
    expect(list.page).toMatchObject({ count: 1, page: 1, pageSize: 20 });

    const got = await client.getMemory({ spaceId: SPACE_A, memoryId: memory?.id ?? "" });
    expect(got.memory?.memoryContent).toBe(memory?.memoryContent);
    expect(got.memory?.sessionEpisodes[0]?.createdAt).toBeDefined();

    await client.deleteMemory({ spaceId: SPACE_A, memoryId: memory?.id ?? "" });
    await expectError(
      client.deleteMemory({ spaceId: SPACE_A, memoryId: memory?.id ?? "" }),
      Code.NotFound,
      "memory_id",
    );
  });

  it("carries the domain errors with the field they are about", async () => {
    const err = await expectError(
      client.createMemory({ spaceId: SPACE_A, sessionId: session(SPACE_A, []).id }),
      Code.InvalidArgument,
      "session_id",
    );
    expect(err.rawMessage).toMatch(/no transcript entries/);
    expect(errorDetailOf(err)?.issues).toEqual([]);
    await expectError(
      client.createMemory({ spaceId: SPACE_A, sessionId: session(SPACE_B).id }),
      Code.NotFound,
      "session_id",
    );
    await expectError(client.getMemory({ spaceId: SPACE_A, memoryId: "nope" }), Code.NotFound, "memory_id");
    await expectError(
      client.resolveMemory({ spaceId: SPACE_A, sessionMemoryId: uuid() }),
      Code.NotFound,
      "memory.session_memory_id",
    );
  });

  it("reports whether ResolveMemory created the memory and whether AddSessionEpisode added the episode", async () => {
    const s = session();
    const created = await client.resolveMemory({ spaceId: SPACE_A, prevSessionId: s.id });
    expect(created.created).toBe(true);
    const reused = await client.resolveMemory({ spaceId: SPACE_A, prevSessionId: s.id });
    expect(reused.created).toBe(false);
    expect(reused.memory?.id).toBe(created.memory?.id);

    const next = session(SPACE_A, tripTranscript, created.memory?.id);
    const memoryId = created.memory?.id ?? "";
    expect((await client.addSessionEpisode({ memoryId, sessionId: next.id })).added).toBe(true);
    const again = await client.addSessionEpisode({ memoryId, sessionId: next.id });
    expect(again.added).toBe(false);
    expect(again.memory?.sessionEpisodes.map((e) => e.sequenceNum)).toEqual([1, 2]);
  });
});
