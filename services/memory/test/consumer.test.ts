import { createMemoryBus, type DeadLetter, listDeadLetters, replayDeadLetter } from "@avatar/bus";
import { SessionMode } from "@avatar/contracts/common";
import { MemoryService } from "@avatar/contracts/memory";
import { SessionEndedSchema } from "@avatar/contracts/sessions";
import { publishEvent, topics } from "@avatar/runtime";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { CONSUMER_NAME, consumeSessionEnded, handleSessionEnded } from "../src/consumer.js";
import { memoryService } from "../src/service.js";
import {
  clearMemories,
  type DirectCalls,
  direct,
  type Harness,
  harness,
  type MemoryTestDb,
  openMemoryDb,
  SPACE_A,
  SPACE_B,
  tripTranscript,
  uuid,
} from "./support.js";

/** The session-ended consumer: its handler called directly, then driven through the in-process bus. */

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

async function seededMemory(): Promise<string> {
  const seed = h.sessions.add({ id: uuid(), spaceId: SPACE_A }, tripTranscript);
  return (await memory.createMemory({ spaceId: SPACE_A, sessionId: seed.id })).memory?.id ?? "";
}

const ended = (session: ReturnType<typeof h.sessions.add>) => create(SessionEndedSchema, { session });
const episodes = async (memoryId: string) =>
  (await memory.getMemory({ spaceId: SPACE_A, memoryId })).memory?.sessionEpisodes ?? [];

describe("handleSessionEnded", () => {
  it("adds the episode of a FULL session that ran with a memory, once under redelivery", async () => {
    const memoryId = await seededMemory();
    const session = h.sessions.add({ id: uuid(), spaceId: SPACE_A, memoryId }, [
      ["user", "Book the hotel near the river."],
    ]);
    await handleSessionEnded(h.ctx, ended(session));
    await handleSessionEnded(h.ctx, ended(session));
    const list = await episodes(memoryId);
    expect(list.map((e) => [e.sequenceNum, e.sessionId])).toEqual([
      [1, list[0]?.sessionId],
      [2, session.id],
    ]);
    expect(list[1]?.summary).toBe("User: Book the hotel near the river.");
  });

  it("ignores sessions without a memory, and logs the ones it cannot use", async () => {
    const memoryId = await seededMemory();
    await handleSessionEnded(h.ctx, ended(h.sessions.add({ id: uuid(), spaceId: SPACE_A }, tripTranscript)));
    await handleSessionEnded(h.ctx, create(SessionEndedSchema, {}));

    const silent = h.sessions.add({ id: uuid(), spaceId: SPACE_A, memoryId }, []);
    await handleSessionEnded(h.ctx, ended(silent));
    const lite = h.sessions.add(
      { id: uuid(), spaceId: SPACE_A, memoryId, mode: SessionMode.LITE },
      tripTranscript,
    );
    await handleSessionEnded(h.ctx, ended(lite));
    const foreign = h.sessions.add({ id: uuid(), spaceId: SPACE_B, memoryId }, tripTranscript);
    await handleSessionEnded(h.ctx, ended(foreign));
    const gone = h.sessions.add({ id: uuid(), spaceId: SPACE_A, memoryId: uuid() }, tripTranscript);
    await handleSessionEnded(h.ctx, ended(gone));

    expect(await episodes(memoryId)).toHaveLength(1);
    const records = h.logs.records();
    expect(records).toContainEqual(
      expect.objectContaining({
        msg: "session ended without transcript entries; no episode added",
        session_id: silent.id,
        memory_id: memoryId,
      }),
    );
    for (const s of [lite, foreign, gone]) {
      expect(records).toContainEqual(
        expect.objectContaining({ msg: "session episode not added", session_id: s.id }),
      );
    }
  });

  it("throws when the sessions service fails, so that the event comes again", async () => {
    const memoryId = await seededMemory();
    const session = h.sessions.add({ id: uuid(), spaceId: SPACE_A, memoryId }, tripTranscript);
    h.sessions.failWith = new ConnectError("sessions down", Code.Unavailable);
    await expect(handleSessionEnded(h.ctx, ended(session))).rejects.toThrow(/sessions down/);
    h.sessions.failWith = undefined;
    await handleSessionEnded(h.ctx, ended(session));
    expect(await episodes(memoryId)).toHaveLength(2);
  });
});

describe("consumeSessionEnded on the bus", () => {
  it("adds episodes in the order sessions end, survives a failed delivery and ignores a redelivered event", async () => {
    const bus = createMemoryBus({ logger: () => {} });
    const sub = await consumeSessionEnded(bus, h.ctx, { retryDelayMs: 10 });
    try {
      const memoryId = await seededMemory();
      const s2 = h.sessions.add({ id: uuid(), spaceId: SPACE_A, memoryId }, [
        ["user", "Second visit about trains."],
      ]);
      const s3 = h.sessions.add({ id: uuid(), spaceId: SPACE_A, memoryId }, [
        ["user", "Third visit about ferries."],
      ]);

      h.sessions.failWith = new ConnectError("sessions down", Code.Unavailable);
      await publishEvent(bus, topics.sessionEnded, ended(s2), s2.id);
      await until(() => h.sessions.getSessionCalls > 0);
      h.sessions.failWith = undefined;
      await until(async () => (await episodes(memoryId)).length === 2);
      await publishEvent(bus, topics.sessionEnded, ended(s3), s3.id);
      // The same fact published again under another message id: delivered again, added once.
      await publishEvent(bus, topics.sessionEnded, ended(s2), `${s2.id}-again`);
      const marker = h.sessions.add({ id: uuid(), spaceId: SPACE_A, memoryId }, [
        ["user", "Fourth visit about buses."],
      ]);
      await publishEvent(bus, topics.sessionEnded, ended(marker), marker.id);

      await until(async () => (await episodes(memoryId)).length === 4);
      const list = await episodes(memoryId);
      expect(list.map((e) => e.sessionId).slice(1)).toEqual([s2.id, s3.id, marker.id]);
      expect(list.map((e) => e.sequenceNum)).toEqual([1, 2, 3, 4]);
    } finally {
      await sub.unsubscribe();
      await bus.close();
    }
  });
});

describe("a session-ended event whose dependency stays down", () => {
  it("is kept as a dead letter after its retries, not dropped, and its replay adds the episode", async () => {
    const bus = createMemoryBus({ logger: () => {} });
    const sub = await consumeSessionEnded(bus, h.ctx, { retryDelayMs: 5, maxDeliver: 3 });
    try {
      const memoryId = await seededMemory();
      const s2 = h.sessions.add({ id: uuid(), spaceId: SPACE_A, memoryId }, [["user", "Back about trains."]]);
      h.sessions.failWith = new ConnectError("sessions down", Code.Unavailable);
      await publishEvent(bus, topics.sessionEnded, ended(s2), s2.id);
      let letters: DeadLetter[] = [];
      await until(async () => {
        letters = await listDeadLetters(bus, { consumer: CONSUMER_NAME });
        return letters.length === 1;
      });
      expect(letters[0]).toMatchObject({ subject: topics.sessionEnded.subject, deliveries: 3 });
      expect(letters[0]?.error).toContain("sessions down");
      h.sessions.failWith = undefined;
      // The outbox publishing it again under its message id is discarded as a duplicate: the dead
      // letter is what keeps it.
      await publishEvent(bus, topics.sessionEnded, ended(s2), s2.id);
      await new Promise((r) => setTimeout(r, 100));
      expect(await episodes(memoryId)).toHaveLength(1);
      expect(await replayDeadLetter(bus, letters[0]?.seq ?? 0)).toBe(true);
      await until(async () => (await episodes(memoryId)).length === 2);
      expect(await listDeadLetters(bus)).toEqual([]);
    } finally {
      await sub.unsubscribe();
      await bus.close();
    }
  });
});

async function until(check: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 20));
  }
}
