/**
 * The behaviour every Bus implementation must show. Each test gets a fresh bus from `makeBus` and uses
 * names unique to the test, so implementations backed by a shared server need no cleanup between tests.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  type Bus,
  BusClosedError,
  type BusMessage,
  type DurableMessage,
  KvConflictError,
  type KvStore,
  NoRespondersError,
  RequestTimeoutError,
} from "../src/bus.js";
import { type DeadLetter, listDeadLetters, replayDeadLetter } from "../src/dead-letters.js";
import type { BusLogger } from "../src/logger.js";
import { gate, recordingLogger, settledWithin, sleep, str, text, uniqueId, waitFor } from "./support.js";

export interface BusUnderTest {
  bus: Bus;
  /** A second connection to the same backend, where that means something (NATS). */
  bus2?: () => Promise<Bus>;
  cleanup(): Promise<void>;
}

/** Time for a message that should not arrive to show up anyway; only guards against false passes. */
const QUIET_MS = 300;

/** A consumer's dead letters once there are `count` (dead letters are stored after the last failure). */
async function eventuallyList(bus: Bus, consumer: string, count: number): Promise<DeadLetter[]> {
  let letters: DeadLetter[] = [];
  await waitFor(`${count} dead letter(s)`, async () => {
    letters = await listDeadLetters(bus, { consumer });
    return letters.length === count;
  });
  return letters;
}

export function busContract(name: string, makeBus: () => Promise<BusUnderTest>): void {
  describe(`${name} bus contract`, () => {
    let ctx: BusUnderTest;
    let bus: Bus;
    let others: Bus[];
    let id: string;

    beforeEach(async () => {
      ctx = await makeBus();
      bus = ctx.bus;
      others = [];
      id = uniqueId();
    });

    afterEach(async () => {
      await Promise.all(others.map((b) => b.close()));
      await ctx.cleanup();
    });

    /** Another connection when the implementation has them, else the same bus. */
    async function otherBus(): Promise<Bus> {
      if (!ctx.bus2) return bus;
      const other = await ctx.bus2();
      others.push(other);
      return other;
    }

    it("starts connected", () => {
      expect(bus.status()).toBe("connected");
    });

    it("carries a message as large as maxPayload says (tried up to 2 MiB)", async () => {
      const size = Math.min(bus.maxPayload() - 1024, 2 * 1024 * 1024);
      expect(size).toBeGreaterThan(0);
      const got: BusMessage[] = [];
      bus.subscribe(`t.${id}.big`, (m) => void got.push(m));
      bus.publish(`t.${id}.big`, new Uint8Array(size).fill(7));
      await waitFor("the large message", () => got.length === 1);
      expect(got[0]?.data.length).toBe(size);
    });

    it("holds no unsent bytes once what was published has arrived", async () => {
      const got: BusMessage[] = [];
      bus.subscribe(`t.${id}.unsent`, (m) => void got.push(m));
      for (let i = 0; i < 4; i++) bus.publish(`t.${id}.unsent`, new Uint8Array(64 * 1024));
      await waitFor("the messages", () => got.length === 4);
      expect(bus.unsentBytes()).toBe(0);
    });

    describe("publish/subscribe", () => {
      it("fans out to every subscriber with subject, data and headers", async () => {
        const a: BusMessage[] = [];
        const b: BusMessage[] = [];
        bus.subscribe(`t.${id}.fan`, (m) => void a.push(m));
        bus.subscribe(`t.${id}.fan`, (m) => void b.push(m));
        bus.publish(`t.${id}.fan`, text("hello"), { "x-trace": "abc" });
        await waitFor("both subscribers", () => a.length === 1 && b.length === 1);
        for (const m of [a[0], b[0]]) {
          expect(m?.subject).toBe(`t.${id}.fan`);
          expect(str(m?.data ?? new Uint8Array())).toBe("hello");
          expect(m?.headers).toEqual({ "x-trace": "abc" });
        }
      });

      it("never runs a handler inside publish", async () => {
        let calls = 0;
        bus.subscribe(`t.${id}.async`, () => {
          calls++;
        });
        bus.publish(`t.${id}.async`, text("x"));
        expect(calls).toBe(0);
        await waitFor("delivery", () => calls === 1);
      });

      it("flush resolves once the subscribers of what was published before have had it", async () => {
        const got: string[] = [];
        bus.subscribe(`t.${id}.flush`, (m) => void got.push(str(m.data)));
        for (const n of ["1", "2", "3"]) bus.publish(`t.${id}.flush`, text(n));
        expect(got).toEqual([]);
        await bus.flush();
        expect(got).toEqual(["1", "2", "3"]);
      });

      it("matches * to exactly one token and > to one or more", async () => {
        const star: string[] = [];
        const rest: string[] = [];
        const nested: string[] = [];
        bus.subscribe(`t.${id}.*`, (m) => void star.push(m.subject));
        bus.subscribe(`t.${id}.>`, (m) => void rest.push(m.subject));
        bus.subscribe(`t.${id}.a.*`, (m) => void nested.push(m.subject));
        for (const s of [`t.${id}`, `t.${id}.a`, `t.${id}.a.b`, `t.${id}.a.b.c`, `t.other${id}.a`]) {
          bus.publish(s, text(s));
        }
        // Per subscription, messages from one publisher arrive in order: these mark the end.
        bus.publish(`t.${id}.end`, text("end"));
        bus.publish(`t.${id}.a.end`, text("end"));
        await waitFor("end markers", () => star.includes(`t.${id}.end`) && nested.includes(`t.${id}.a.end`));
        await waitFor("end marker for >", () => rest.includes(`t.${id}.a.end`));
        expect(star).toEqual([`t.${id}.a`, `t.${id}.end`]);
        expect(rest).toEqual([`t.${id}.a`, `t.${id}.a.b`, `t.${id}.a.b.c`, `t.${id}.end`, `t.${id}.a.end`]);
        expect(nested).toEqual([`t.${id}.a.b`, `t.${id}.a.end`]);
      });

      it("unsubscribe stops delivery and waits for the running handler", async () => {
        const release = gate();
        let started = 0;
        let finished = 0;
        const sub = bus.subscribe(`t.${id}.unsub`, async () => {
          started++;
          await release.promise;
          finished++;
        });
        bus.publish(`t.${id}.unsub`, text("1"));
        await waitFor("handler start", () => started === 1);
        const unsubscribed = sub.unsubscribe();
        expect(await settledWithin(unsubscribed, 50)).toBe(false);
        release.open();
        await unsubscribed;
        expect(finished).toBe(1);

        const marker: string[] = [];
        bus.subscribe(`t.${id}.unsub`, (m) => void marker.push(str(m.data)));
        bus.publish(`t.${id}.unsub`, text("2"));
        await waitFor("marker subscriber", () => marker.length === 1);
        await sleep(QUIET_MS);
        expect(started).toBe(1);
      });

      it("rejects malformed subjects", () => {
        expect(() => bus.publish(`t.${id}.*`, text("x"))).toThrow();
        expect(() => bus.publish(`t.${id}.>`, text("x"))).toThrow();
        expect(() => bus.publish(`t..${id}`, text("x"))).toThrow();
        expect(() => bus.publish("", text("x"))).toThrow();
        expect(() => bus.subscribe(`t.>.${id}`, () => undefined)).toThrow();
        expect(() => bus.subscribe(`t.${id} x`, () => undefined)).toThrow();
      });
    });

    describe("queue groups", () => {
      it("give each message to exactly one member, spread across members, beside plain subscribers", async () => {
        const count = 40;
        const members: number[][] = [[], []];
        const plain: number[] = [];
        for (const received of members) {
          bus.subscribe(`t.${id}.q`, (m) => void received.push(Number(str(m.data))), { queue: "workers" });
        }
        bus.subscribe(`t.${id}.q`, (m) => void plain.push(Number(str(m.data))));
        for (let i = 0; i < count; i++) bus.publish(`t.${id}.q`, text(String(i)));

        const total = () => members.reduce((n, r) => n + r.length, 0);
        await waitFor("all messages", () => plain.length === count && total() === count);
        await sleep(QUIET_MS);
        expect(total()).toBe(count);
        expect(members.flat().sort((x, y) => x - y)).toEqual([...Array(count).keys()]);
        expect(members[0]?.length).toBeGreaterThan(0);
        expect(members[1]?.length).toBeGreaterThan(0);
      });

      it("spread requests across serving members, each answered once", async () => {
        const handled = { a: 0, b: 0 };
        bus.serve(
          `t.${id}.svc`,
          () => {
            handled.a++;
            return text("a");
          },
          { queue: "svc" },
        );
        bus.serve(
          `t.${id}.svc`,
          () => {
            handled.b++;
            return text("b");
          },
          { queue: "svc" },
        );
        const replies: string[] = [];
        for (let i = 0; i < 30; i++) {
          replies.push(str(await bus.request(`t.${id}.svc`, text("?"), { timeoutMs: 10_000 })));
        }
        expect(handled.a + handled.b).toBe(30);
        expect(replies.filter((r) => r === "a").length).toBe(handled.a);
        expect(handled.a).toBeGreaterThan(0);
        expect(handled.b).toBeGreaterThan(0);
      });
    });

    describe("request/reply", () => {
      it("returns the handler's payload; the handler sees data and headers", async () => {
        bus.serve(`t.${id}.echo`, (m) => text(`${str(m.data)}:${m.headers["x-who"]}`));
        const reply = await bus.request(`t.${id}.echo`, text("ping"), {
          timeoutMs: 10_000,
          headers: { "x-who": "me" },
        });
        expect(str(reply)).toBe("ping:me");
      });

      it("rejects with NoRespondersError when nobody serves the subject", async () => {
        await expect(bus.request(`t.${id}.nobody`, text("?"), { timeoutMs: 10_000 })).rejects.toBeInstanceOf(
          NoRespondersError,
        );
      });

      it("rejects with RequestTimeoutError when the handler is too slow", async () => {
        const release = gate();
        bus.serve(`t.${id}.slow`, async () => {
          await release.promise;
          return text("late");
        });
        try {
          await expect(bus.request(`t.${id}.slow`, text("?"), { timeoutMs: 300 })).rejects.toBeInstanceOf(
            RequestTimeoutError,
          );
        } finally {
          release.open();
        }
      });

      it("sends nothing back when the handler throws, so the requester times out", async () => {
        bus.serve(`t.${id}.broken`, () => {
          throw new Error("boom");
        });
        await expect(bus.request(`t.${id}.broken`, text("?"), { timeoutMs: 300 })).rejects.toBeInstanceOf(
          RequestTimeoutError,
        );
      });

      it("counts a plain subscriber as a responder that never answers", async () => {
        bus.subscribe(`t.${id}.mute`, () => undefined);
        await expect(bus.request(`t.${id}.mute`, text("?"), { timeoutMs: 300 })).rejects.toBeInstanceOf(
          RequestTimeoutError,
        );
      });
    });

    describe("durable events", () => {
      it("accept only subjects under events.", async () => {
        await expect(bus.publishDurable(`t.${id}.x`, text("x"))).rejects.toThrow(/events\./);
        await expect(bus.publishDurable(`events.${id}.*`, text("x"))).rejects.toThrow();
        await expect(bus.consumeDurable(`t.${id}.>`, `c${id}`, () => undefined)).rejects.toThrow(/events\./);
      });

      it("also reach plain subscribers of the subject, every publish (duplicates too)", async () => {
        const got: string[] = [];
        bus.subscribe(`events.${id}.live`, (m) => void got.push(str(m.data)));
        await bus.publishDurable(`events.${id}.live`, text("a"), { msgId: `m${id}` });
        await bus.publishDurable(`events.${id}.live`, text("a"), { msgId: `m${id}` });
        await bus.publishDurable(`events.${id}.live`, text("b"));
        await waitFor("three live messages", () => got.length >= 3);
        expect(got).toEqual(["a", "a", "b"]);
      });

      it("reach a consumer created after they were published, in order, with headers", async () => {
        for (const n of [1, 2, 3]) {
          await bus.publishDurable(`events.${id}.early`, text(String(n)), { headers: { "x-n": String(n) } });
        }
        const got: DurableMessage[] = [];
        await bus.consumeDurable(`events.${id}.>`, `late${id}`, (m) => void got.push(m));
        await waitFor("three events", () => got.length === 3);
        expect(got.map((m) => str(m.data))).toEqual(["1", "2", "3"]);
        expect(got.map((m) => m.headers["x-n"])).toEqual(["1", "2", "3"]);
        expect(got.every((m) => m.deliveryCount === 1 && m.subject === `events.${id}.early`)).toBe(true);
      });

      it("made at once, without awaiting each, are stored and delivered in the order they were made", async () => {
        // What the outbox relies on when it sends a batch at once (packages/runtime/src/outbox.ts).
        const numbers = Array.from({ length: 200 }, (_, n) => String(n));
        await Promise.all(
          numbers.map((n) => bus.publishDurable(`events.${id}.batch`, text(n), { msgId: `b${id}-${n}` })),
        );
        const got: string[] = [];
        await bus.consumeDurable(`events.${id}.batch`, `batch${id}`, (m) => void got.push(str(m.data)));
        await waitFor("200 events", () => got.length === 200);
        expect(got).toEqual(numbers);
      });

      it("are handled once per consumer name across its subscriptions, and by every name", async () => {
        const count = 30;
        const handledBy: string[][] = [[], []];
        const audit: string[] = [];
        const second = await otherBus();
        const handlerFor = (received: string[]) => async (m: DurableMessage) => {
          received.push(str(m.data));
          await sleep(20);
        };
        await bus.consumeDurable(`events.${id}.work`, `workers${id}`, handlerFor(handledBy[0] ?? []));
        await second.consumeDurable(`events.${id}.work`, `workers${id}`, handlerFor(handledBy[1] ?? []));
        await bus.consumeDurable(`events.${id}.work`, `audit${id}`, (m) => void audit.push(str(m.data)));
        for (let i = 0; i < count; i++) await bus.publishDurable(`events.${id}.work`, text(String(i)));

        const total = () => (handledBy[0]?.length ?? 0) + (handledBy[1]?.length ?? 0);
        await waitFor("all work", () => total() === count && audit.length === count);
        await sleep(QUIET_MS);
        expect(total()).toBe(count);
        expect(new Set(handledBy.flat()).size).toBe(count);
        expect(handledBy[0]?.length).toBeGreaterThan(0);
        expect(handledBy[1]?.length).toBeGreaterThan(0);
        expect(audit.length).toBe(count);
      });

      it("are delivered again retryDelayMs after the handler throws", async () => {
        const deliveries: { count: number; at: number }[] = [];
        await bus.consumeDurable(
          `events.${id}.retry`,
          `retry${id}`,
          (m) => {
            deliveries.push({ count: m.deliveryCount, at: Date.now() });
            if (m.deliveryCount === 1) throw new Error("first attempt fails");
          },
          { retryDelayMs: 400 },
        );
        await bus.publishDurable(`events.${id}.retry`, text("x"));
        await waitFor("redelivery", () => deliveries.length === 2);
        expect(deliveries.map((d) => d.count)).toEqual([1, 2]);
        const [first, second] = deliveries;
        expect((second?.at ?? 0) - (first?.at ?? 0)).toBeGreaterThanOrEqual(350);
        await sleep(QUIET_MS);
        expect(deliveries.length).toBe(2);
      });

      it("back off: the delay doubles with every failure, up to maxRetryDelayMs", async () => {
        const at: number[] = [];
        await bus.consumeDurable(
          `events.${id}.backoff`,
          `backoff${id}`,
          () => {
            at.push(Date.now());
            if (at.length < 5) throw new Error("still failing");
          },
          { retryDelayMs: 100, maxRetryDelayMs: 300, maxDeliver: 10 },
        );
        await bus.publishDurable(`events.${id}.backoff`, text("x"));
        await waitFor("five deliveries", () => at.length === 5, 10_000);
        const gaps = at.slice(1).map((t, i) => t - (at[i] ?? 0));
        expect(gaps[0]).toBeGreaterThanOrEqual(90);
        expect(gaps[1]).toBeGreaterThanOrEqual(190);
        expect(gaps[2]).toBeGreaterThanOrEqual(290);
        expect(gaps[3]).toBeGreaterThanOrEqual(290);
        expect(gaps[3]).toBeLessThan(1_500);
      });

      it("move to the dead letters after maxDeliver failed deliveries, without blocking later ones; a replay handles them", async () => {
        let poison = 0;
        let healed = false;
        const ok: string[] = [];
        const consumer = `poison${id}`;
        await bus.consumeDurable(
          `events.${id}.poison`,
          consumer,
          (m) => {
            if (str(m.data) === "poison" && !healed) {
              poison++;
              throw new Error("cannot handle");
            }
            ok.push(str(m.data));
          },
          { maxDeliver: 2, retryDelayMs: 100 },
        );
        await bus.publishDurable(`events.${id}.poison`, text("poison"), { headers: { "x-trace": "t1" } });
        await bus.publishDurable(`events.${id}.poison`, text("fine"));
        await waitFor("fine message and both poison deliveries", () => ok.length === 1 && poison === 2);
        const letters = await eventuallyList(bus, consumer, 1);
        expect(letters).toMatchObject([
          { subject: `events.${id}.poison`, consumer, deliveries: 2, error: "cannot handle" },
        ]);
        expect(str(letters[0]?.data ?? new Uint8Array())).toBe("poison");
        expect(letters[0]?.headers).toMatchObject({ "x-trace": "t1" });
        await sleep(500);
        expect(poison).toBe(2);

        healed = true;
        expect(await replayDeadLetter(bus, letters[0]?.seq ?? 0)).toBe(true);
        await waitFor("the replayed message handled", () => ok.includes("poison"));
        expect(await listDeadLetters(bus, { consumer })).toEqual([]);
        expect(await replayDeadLetter(bus, letters[0]?.seq ?? 0)).toBe(false);
      });

      it("can be read under a filter without being consumed, and deleted one by one", async () => {
        await bus.publishDurable(`events.${id}.read.a`, text("1"));
        await bus.publishDurable(`events.${id}.other`, text("2"));
        await bus.publishDurable(`events.${id}.read.b`, text("3"), { headers: { h: "v" } });
        const read = await bus.readDurable(`events.${id}.read.>`);
        expect(read.map((m) => [m.subject, str(m.data)])).toEqual([
          [`events.${id}.read.a`, "1"],
          [`events.${id}.read.b`, "3"],
        ]);
        expect(read[1]?.headers).toMatchObject({ h: "v" });
        expect(read[0]?.storedAt).toBeInstanceOf(Date);
        const [first, second] = read;
        expect(
          await bus.readDurable(`events.${id}.read.>`, { fromSeq: (first?.seq ?? 0) + 1, limit: 1 }),
        ).toHaveLength(1);
        expect(await bus.deleteDurable(first?.seq ?? 0)).toBe(true);
        expect(await bus.deleteDurable(first?.seq ?? 0)).toBe(false);
        expect((await bus.readDurable(`events.${id}.read.>`)).map((m) => m.seq)).toEqual([second?.seq]);
        // A consumer created now does not get the deleted one.
        const seen: string[] = [];
        await bus.consumeDurable(`events.${id}.read.>`, `reader${id}`, (m) => {
          seen.push(str(m.data));
        });
        await waitFor("the kept one", () => seen.length === 1);
        await sleep(QUIET_MS);
        expect(seen).toEqual(["3"]);
      });

      it("are delivered again to another subscription when not completed within ackWaitMs", async () => {
        const release = gate();
        const deliveries: { sub: number; count: number }[] = [];
        const second = await otherBus();
        const handlerFor = (sub: number) => async (m: DurableMessage) => {
          deliveries.push({ sub, count: m.deliveryCount });
          if (m.deliveryCount === 1) await release.promise;
        };
        const options = { ackWaitMs: 1_000, retryDelayMs: 100 };
        await bus.consumeDurable(`events.${id}.stuck`, `stuck${id}`, handlerFor(1), options);
        await second.consumeDurable(`events.${id}.stuck`, `stuck${id}`, handlerFor(2), options);
        await bus.publishDurable(`events.${id}.stuck`, text("x"));
        try {
          await waitFor("redelivery after ack wait", () => deliveries.length === 2);
          const [first, again] = deliveries;
          expect(again?.count).toBe(2);
          expect(again?.sub).not.toBe(first?.sub);
        } finally {
          release.open();
        }
      });

      it("store a msgId once within the dedupe window", async () => {
        await bus.publishDurable(`events.${id}.dedupe`, text("a"), { msgId: `m1${id}` });
        await bus.publishDurable(`events.${id}.dedupe`, text("a-again"), { msgId: `m1${id}` });
        await bus.publishDurable(`events.${id}.dedupe`, text("b"), { msgId: `m2${id}` });
        await bus.publishDurable(`events.${id}.dedupe`, text("c"));
        const got: string[] = [];
        await bus.consumeDurable(`events.${id}.dedupe`, `dedupe${id}`, (m) => void got.push(str(m.data)));
        await waitFor("last event", () => got.includes("c"));
        expect(got).toEqual(["a", "b", "c"]);
      });

      it("resume where the consumer name left off after unsubscribing", async () => {
        const first: string[] = [];
        const options = { ackWaitMs: 1_000 };
        const sub = await bus.consumeDurable(
          `events.${id}.resume`,
          `resume${id}`,
          (m) => void first.push(str(m.data)),
          options,
        );
        await bus.publishDurable(`events.${id}.resume`, text("1"));
        await waitFor("first event", () => first.length === 1);
        await sub.unsubscribe();
        await bus.publishDurable(`events.${id}.resume`, text("2"));
        const later: string[] = [];
        await bus.consumeDurable(
          `events.${id}.resume`,
          `resume${id}`,
          (m) => void later.push(str(m.data)),
          options,
        );
        await waitFor("second event", () => later.length === 1);
        await sleep(QUIET_MS);
        expect(first).toEqual(["1"]);
        expect(later).toEqual(["2"]);
      });
    });

    describe("kv", () => {
      it("creates, reads, compares-and-sets, puts and deletes with increasing revisions", async () => {
        const kv = await bus.kv(`b${id}`);
        expect(await kv.get("k")).toBeNull();
        const r1 = await kv.create("k", text("one"));
        await expect(kv.create("k", text("again"))).rejects.toBeInstanceOf(KvConflictError);
        const got = await kv.get("k");
        expect(got && str(got.value)).toBe("one");
        expect(got?.revision).toBe(r1);

        await expect(kv.update("k", text("stale"), r1 + 100)).rejects.toBeInstanceOf(KvConflictError);
        const r2 = await kv.update("k", text("two"), r1);
        expect(r2).toBeGreaterThan(r1);
        await expect(kv.update("k", text("stale"), r1)).rejects.toBeInstanceOf(KvConflictError);
        await expect(kv.update("missing", text("x"), r2)).rejects.toBeInstanceOf(KvConflictError);

        const r3 = await kv.put("k", text("three"));
        expect(r3).toBeGreaterThan(r2);
        expect((await kv.get("k"))?.revision).toBe(r3);

        await kv.delete("k");
        expect(await kv.get("k")).toBeNull();
        const r4 = await kv.create("k", text("reborn"));
        expect(r4).toBeGreaterThan(r3);
        const reborn = await kv.get("k");
        expect(reborn && str(reborn.value)).toBe("reborn");
      });

      it("keeps buckets apart and reopens the same bucket", async () => {
        const a = await bus.kv(`a${id}`);
        const b = await bus.kv(`b${id}`);
        await a.put("k", text("in-a"));
        expect(await b.get("k")).toBeNull();
        const again = await bus.kv(`a${id}`);
        const got = await again.get("k");
        expect(got && str(got.value)).toBe("in-a");
      });

      it("rejects invalid bucket names and keys", async () => {
        await expect(bus.kv(`bad.${id}`)).rejects.toThrow();
        const kv = await bus.kv(`b${id}`);
        await expect(kv.put("bad key", text("x"))).rejects.toThrow();
        await expect(kv.get(".leading")).rejects.toThrow();
        await expect(kv.update("k", text("x"), 0)).rejects.toThrow();
      });

      it("counts exactly under many concurrent create/update increments", async () => {
        const workers = 10;
        const perWorker = 10;
        const second = await otherBus();
        const stores = [await bus.kv(`n${id}`), await second.kv(`n${id}`)];
        const increment = async (kv: KvStore) => {
          for (;;) {
            const current = await kv.get("n");
            try {
              if (current)
                await kv.update("n", text(String(Number(str(current.value)) + 1)), current.revision);
              else await kv.create("n", text("1"));
              return;
            } catch (err) {
              if (!(err instanceof KvConflictError)) throw err;
            }
          }
        };
        await Promise.all(
          Array.from({ length: workers }, async (_, w) => {
            const kv = stores[w % stores.length] as KvStore;
            for (let i = 0; i < perWorker; i++) await increment(kv);
          }),
        );
        const final = await stores[0]?.get("n");
        expect(final && str(final.value)).toBe(String(workers * perWorker));
      });

      it("removes entries once the bucket TTL has passed", async () => {
        const kv = await bus.kv(`ttl${id}`, { ttlMs: 1_500 });
        await kv.put("k", text("short-lived"));
        expect(await kv.get("k")).not.toBeNull();
        await waitFor("expiry", async () => (await kv.get("k")) === null);
        expect(await kv.create("k", text("new"))).toBeGreaterThan(0);
      });
    });

    describe("close", () => {
      it("waits for running subscribe, serve and durable handlers, answering requests in flight", async () => {
        const release = gate();
        const started = new Set<string>();
        const finished = new Set<string>();
        const track = (name: string) => async () => {
          started.add(name);
          await release.promise;
          finished.add(name);
        };
        bus.subscribe(`t.${id}.close`, track("subscribe"));
        bus.serve(`t.${id}.close-svc`, async () => {
          await track("serve")();
          return text("answer");
        });
        await bus.consumeDurable(`events.${id}.close`, `close${id}`, track("durable"));
        bus.publish(`t.${id}.close`, text("x"));
        const answer = bus.request(`t.${id}.close-svc`, text("?"), { timeoutMs: 15_000 });
        await bus.publishDurable(`events.${id}.close`, text("x"));
        await waitFor("all handlers running", () => started.size === 3);

        const closing = bus.close();
        expect(await settledWithin(closing, 100)).toBe(false);
        expect(finished.size).toBe(0);
        release.open();
        await closing;
        expect([...finished].sort()).toEqual(["durable", "serve", "subscribe"]);
        expect(str(await answer)).toBe("answer");
      });

      it("refuses work afterwards and can be called again", async () => {
        await bus.close();
        await bus.close();
        expect(bus.status()).toBe("closed");
        expect(() => bus.publish(`t.${id}.x`, text("x"))).toThrow(BusClosedError);
        expect(() => bus.subscribe(`t.${id}.x`, () => undefined)).toThrow(BusClosedError);
        expect(() => bus.serve(`t.${id}.x`, () => text("x"))).toThrow(BusClosedError);
        await expect(bus.request(`t.${id}.x`, text("x"), { timeoutMs: 1_000 })).rejects.toBeInstanceOf(
          BusClosedError,
        );
        await expect(bus.publishDurable(`events.${id}.x`, text("x"))).rejects.toBeInstanceOf(BusClosedError);
        await expect(bus.flush()).rejects.toBeInstanceOf(BusClosedError);
        await expect(bus.consumeDurable(`events.${id}.x`, `c${id}`, () => undefined)).rejects.toBeInstanceOf(
          BusClosedError,
        );
        await expect(bus.kv(`b${id}`)).rejects.toBeInstanceOf(BusClosedError);
      });
    });
  });
}

/** What a bus must report through its logger, given a factory that wires a recording logger in. */
export function busLoggingContract(name: string, makeBus: (logger: BusLogger) => Promise<Bus>): void {
  describe(`${name} bus logging`, () => {
    it("reports a failing subscribe handler and keeps delivering", async () => {
      const { logger, records } = recordingLogger();
      const bus = await makeBus(logger);
      const id = uniqueId();
      try {
        const seen: string[] = [];
        bus.subscribe(`t.${id}.fails`, (m) => {
          seen.push(str(m.data));
          if (str(m.data) === "bad") throw new Error("handler broke");
        });
        bus.publish(`t.${id}.fails`, text("bad"));
        bus.publish(`t.${id}.fails`, text("good"));
        await waitFor("both messages", () => seen.length === 2);
        await waitFor("failure logged", () => records.some((r) => r.fields?.error === "handler broke"));
      } finally {
        await bus.close();
      }
    });

    it("reports a handler's rejection as it reports a throw, for subscribers and servers alike", async () => {
      const { logger, records } = recordingLogger();
      const bus = await makeBus(logger);
      const id = uniqueId();
      try {
        bus.subscribe(`t.${id}.rejects`, async () => {
          await new Promise((r) => setTimeout(r, 5));
          throw new Error("late subscriber failure");
        });
        bus.serve(`t.${id}.serve-rejects`, async () => {
          throw new Error("late server failure");
        });
        bus.publish(`t.${id}.rejects`, text("x"));
        await expect(
          bus.request(`t.${id}.serve-rejects`, text("?"), { timeoutMs: 300 }),
        ).rejects.toBeInstanceOf(RequestTimeoutError);
        await waitFor("both failures logged", () =>
          ["late subscriber failure", "late server failure"].every((e) =>
            records.some((r) => r.level === "warn" && r.fields?.error === e),
          ),
        );
      } finally {
        await bus.close();
      }
    });

    it("reports a durable message it gives up on", async () => {
      const { logger, records } = recordingLogger();
      const bus = await makeBus(logger);
      const id = uniqueId();
      try {
        await bus.consumeDurable(
          `events.${id}.poison`,
          `giveup${id}`,
          () => {
            throw new Error("nope");
          },
          { maxDeliver: 1 },
        );
        await bus.publishDurable(`events.${id}.poison`, text("x"));
        await waitFor("drop logged", () => records.some((r) => r.level === "error"));
        expect(records.find((r) => r.level === "error")?.fields).toMatchObject({
          consumer: `giveup${id}`,
          deliveryCount: 1,
        });
      } finally {
        await bus.close();
      }
    });
  });
}
