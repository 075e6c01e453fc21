import type { Bus } from "@avatar/bus";
import { SessionEndedSchema } from "@avatar/contracts/sessions";
import { create, fromBinary } from "@bufbuild/protobuf";
import type { Kysely } from "kysely";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createDb } from "../src/db.js";
import { topics } from "../src/events.js";
import { silentLogger } from "../src/log.js";
import {
  createOutboxTable,
  enqueuedEvents,
  enqueueEvent,
  type OutboxDatabase,
  OutboxPublisher,
} from "../src/outbox.js";
import { createTestDatabase, sentStatements, type TestDatabase } from "./support.js";

/**
 * What the publisher gave the bus: `sent` in the order the publishes were made, `published` those that
 * succeeded; `fail(msgId)` makes the bus refuse that message (once); `mostInFlight` the most publishes
 * that awaited their acknowledgement at once.
 */
function recordingBus(delayMs = 0) {
  const sent: string[] = [];
  const published: string[] = [];
  const failing = new Set<string>();
  let inFlight = 0;
  const state = { mostInFlight: 0 };
  const bus = {
    async publishDurable(_subject: string, _data: Uint8Array, options?: { msgId?: string }) {
      const id = options?.msgId ?? "";
      sent.push(id);
      state.mostInFlight = Math.max(state.mostInFlight, ++inFlight);
      try {
        // The acknowledgement comes later (a tick at least), as NATS's does.
        await new Promise((resolve) => setTimeout(resolve, delayMs));
        if (failing.delete(id)) throw new Error(`bus refused ${id}`);
        published.push(id);
      } finally {
        inFlight--;
      }
    },
  };
  return {
    bus: bus as unknown as Bus,
    sent,
    published,
    state,
    fail: (msgId: string) => failing.add(msgId),
  };
}

let database: TestDatabase;
let db: Kysely<OutboxDatabase>;

beforeAll(async () => {
  database = await createTestDatabase();
  db = createDb<OutboxDatabase>({ url: database.url, schema: "public", poolSize: 4 });
  await createOutboxTable(db as Kysely<unknown>);
});
afterAll(async () => {
  await db?.destroy();
  await database?.drop();
});
beforeEach(async () => {
  await db.deleteFrom("outbox").execute();
});

/** Puts events `msg-<from>` .. `msg-<to - 1>` in the outbox, in one transaction. */
async function enqueue(from: number, to: number) {
  await db.transaction().execute(async (trx) => {
    for (let i = from; i < to; i++) {
      const ended = create(SessionEndedSchema, { session: { id: `s-${i}` } });
      await enqueueEvent(trx, topics.sessionEnded, ended, `msg-${i}`, new Date());
    }
  });
}

const range = (from: number, to: number) => Array.from({ length: to - from }, (_, k) => `msg-${from + k}`);
const left = async () =>
  (await db.selectFrom("outbox").select("msg_id").orderBy("id").execute()).map((r) => r.msg_id);

describe("OutboxPublisher", () => {
  it("publishes what waits, in order and in batches, and removes it", async () => {
    await enqueue(0, 12);
    const { bus, sent, published } = recordingBus();
    await new OutboxPublisher(db, bus, silentLogger, 5).kick();
    expect(sent).toEqual(range(0, 12));
    expect(published).toEqual(range(0, 12));
    expect(await left()).toEqual([]);
  });

  it("sends a batch's events at once, in order, rather than each after the last one's acknowledgement", async () => {
    await enqueue(0, 12);
    const { bus, sent, state } = recordingBus(5);
    await new OutboxPublisher(db, bus, silentLogger, 5).kick();
    expect(sent).toEqual(range(0, 12));
    // A batch of 5 awaited its acknowledgements together; one at a time would read 1.
    expect(state.mostInFlight).toBe(5);
  });

  it("keeps the events from the one whose publish failed, and publishes them at the next kick", async () => {
    await enqueue(0, 4);
    const { bus, sent, published, fail } = recordingBus();
    const publisher = new OutboxPublisher(db, bus, silentLogger);
    fail("msg-2");
    await publisher.kick();
    // Sent together: the one after the failure went out too. What went before the failure is removed;
    // the failed one and everything after it wait, in order.
    expect(published).toEqual(["msg-0", "msg-1", "msg-3"]);
    expect(await left()).toEqual(range(2, 4));
    await publisher.kick();
    // msg-3 goes again (at least once: NATS drops the repeat by its message id).
    expect(sent).toEqual([...range(0, 4), ...range(2, 4)]);
    expect(await left()).toEqual([]);
  });

  it("shares the work between replicas: each event is published by one of them", async () => {
    await enqueue(0, 40);
    const a = recordingBus();
    const b = recordingBus();
    // A takes a batch and holds it (its acknowledgements wait) until B has published one: B must get a
    // batch of its own while A holds its rows, not wait for A's locks (two free-running replicas let one
    // take all 40 on a busy host, which is no test of this).
    let aHolds!: () => void;
    const aHolding = new Promise<void>((resolve) => {
      aHolds = resolve;
    });
    let bPublished!: () => void;
    const afterB = new Promise<void>((resolve) => {
      bPublished = resolve;
    });
    const gatedA = {
      publishDurable: async (...args: Parameters<Bus["publishDurable"]>) => {
        aHolds();
        await afterB;
        return a.bus.publishDurable(...args);
      },
    } as unknown as Bus;
    const tappedB = {
      publishDurable: async (...args: Parameters<Bus["publishDurable"]>) => {
        await b.bus.publishDurable(...args);
        bPublished();
      },
    } as unknown as Bus;
    const replicaA = new OutboxPublisher(db, gatedA, silentLogger, 5).kick();
    await aHolding;
    await Promise.all([replicaA, new OutboxPublisher(db, tappedB, silentLogger, 5).kick()]);
    expect([...a.published, ...b.published].sort()).toEqual(range(0, 40).sort());
    expect(a.published.length).toBeGreaterThan(0);
    expect(b.published.length).toBeGreaterThan(0);
  });

  it("removes what it published with one statement text, whatever the batch's size", async () => {
    // A statement per batch size would take one of the pool's bounded prepared-statement names each.
    await enqueue(0, 8);
    const { bus, published } = recordingBus();
    const sent = await sentStatements<OutboxDatabase>(database.url, "public", (logged) =>
      new OutboxPublisher(logged, bus, silentLogger, 5).kick(),
    );
    expect(published).toEqual(range(0, 8));
    expect(await left()).toEqual([]);
    expect(new Set(sent.filter((text) => /^\s*delete/i.test(text))).size).toBe(1);
  });

  it("carries the event as written", async () => {
    await enqueue(7, 8);
    const seen: Uint8Array[] = [];
    const bus = { publishDurable: async (_s: string, data: Uint8Array) => void seen.push(data) };
    await new OutboxPublisher(db, bus as unknown as Bus, silentLogger).kick();
    expect(fromBinary(SessionEndedSchema, seen[0] ?? new Uint8Array()).session?.id).toBe("s-7");
  });
});

describe("enqueuedEvents", () => {
  it("tells a transaction that put an event in the outbox from one that did not", async () => {
    const [wrote, didNot] = await Promise.all([
      db.transaction().execute(async (trx) => {
        await enqueueEvent(trx, topics.sessionEnded, create(SessionEndedSchema), "msg-x", new Date());
        return enqueuedEvents(trx);
      }),
      db.transaction().execute(async (trx) => {
        await trx.selectFrom("outbox").select("id").execute();
        return enqueuedEvents(trx);
      }),
    ]);
    expect(wrote).toBe(true);
    expect(didNot).toBe(false);
  });
});
