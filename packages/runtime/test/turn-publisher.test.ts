import { describe, expect, it } from "vitest";
import { TurnPublisher } from "../src/turn-publisher.js";
import { collectingLogger, nextTurn } from "./support.js";

const frame = (n: number) => new Uint8Array([n]);

/**
 * A bus that records what it is given, in order, refuses subjects named in `refused` when they are
 * published, carries messages of at most `maxPayload` bytes, is closed once `closed` is set, and holds
 * `unsent` bytes it has not written.
 */
function recordingBus(refused: ReadonlySet<string> = new Set(), maxPayload = 1024) {
  const published: string[] = [];
  return {
    published,
    closed: false,
    unsent: 0,
    unsentBytes() {
      return this.unsent;
    },
    status() {
      return this.closed ? ("closed" as const) : ("connected" as const);
    },
    maxPayload: () => maxPayload,
    publish(subject: string, data: Uint8Array) {
      if (refused.has(subject)) throw new Error(`the bus is closed (${subject})`);
      published.push(`${subject}:${data[0]}`);
    },
  };
}

describe("TurnPublisher", () => {
  it("hands the frames of one turn to the bus together, after the turn, in the order they were made", async () => {
    const bus = recordingBus();
    const outbox = new TurnPublisher(bus, collectingLogger().log);
    outbox.publish("rt.a.out", frame(1));
    outbox.publish("rt.b.out", frame(2));
    outbox.publish("rt.a.out", frame(3));
    expect(bus.published).toEqual([]);
    await nextTurn();
    expect(bus.published).toEqual(["rt.a.out:1", "rt.b.out:2", "rt.a.out:3"]);

    outbox.publish("rt.a.out", frame(4));
    await nextTurn();
    expect(bus.published.slice(3)).toEqual(["rt.a.out:4"]);
  });

  it("publishes what waits at once when flushed, and nothing twice", async () => {
    const bus = recordingBus();
    const outbox = new TurnPublisher(bus, collectingLogger().log);
    outbox.publish("rt.a.out", frame(1));
    outbox.flush();
    expect(bus.published).toEqual(["rt.a.out:1"]);
    await nextTurn();
    expect(bus.published).toEqual(["rt.a.out:1"]);
  });

  it("goes on past frames the bus refuses, and says so in one warning", async () => {
    const bus = recordingBus(new Set(["rt.gone.out"]));
    const { log, records } = collectingLogger();
    const outbox = new TurnPublisher(bus, log, { what: "server frames" });
    outbox.publish("rt.gone.out", frame(1));
    outbox.publish("rt.a.out", frame(2));
    outbox.publish("rt.gone.out", frame(3));
    await nextTurn();
    expect(bus.published).toEqual(["rt.a.out:2"]);
    const warnings = records().filter((r) => r.level === "warn");
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ msg: "server frames were not published", failed: 2 });
  });

  it("refuses at once what the bus would refuse: a message larger than it carries, anything once it closed", async () => {
    const bus = recordingBus(new Set(), 4);
    const { log, records } = collectingLogger();
    const outbox = new TurnPublisher(bus, log, { what: "client frames" });
    expect(outbox.publish("rt.a.out", new Uint8Array([1, 2, 3, 4, 5]))).toBe("refused");
    expect(outbox.publish("rt.a.out", new Uint8Array([6, 7, 8, 9]))).toBe("queued");
    bus.closed = true;
    expect(outbox.publish("rt.a.out", frame(10))).toBe("refused");
    await nextTurn();
    // Only what was taken went out (the bus, closed since, is not asked again here).
    expect(bus.published).toEqual(["rt.a.out:6"]);
    const warnings = records().filter((r) => r.level === "warn");
    expect(warnings.map((w) => [w.msg, w.bytes, w.status])).toEqual([
      ["client frames not published", 5, "connected"],
      ["client frames not published", 1, "closed"],
    ]);
  });

  it("holds back what would take the bus past its unsent bound, counting what waits for the turn, until it is down to half", async () => {
    const bus = recordingBus();
    const { log, records } = collectingLogger();
    const outbox = new TurnPublisher(bus, log, { what: "client frames", maxUnsentBytes: 10 });
    bus.unsent = 7;
    expect(outbox.publish("rt.a.out", new Uint8Array([1, 0]))).toBe("queued");
    // 7 unsent and 2 waiting: two more bytes do not fit.
    expect(outbox.publish("rt.a.out", new Uint8Array([2, 0]))).toBe("backlogged");
    // One would, but the backlog lasts until the bus is down to half the bound.
    expect(outbox.publish("rt.a.out", new Uint8Array([3]))).toBe("backlogged");
    // A refusal stays a refusal.
    expect(outbox.publish("rt.a.out", new Uint8Array(2000))).toBe("refused");
    await nextTurn();
    expect(bus.published).toEqual(["rt.a.out:1"]);
    bus.unsent = 5;
    expect(outbox.wouldHoldBack(1)).toBe(true);
    expect(outbox.publish("rt.a.out", new Uint8Array([4]))).toBe("backlogged");
    bus.unsent = 4;
    expect(outbox.wouldHoldBack(1)).toBe(false);
    expect(outbox.wouldHoldBack(2)).toBe(true);
    expect(outbox.publish("rt.a.out", new Uint8Array([5]))).toBe("queued");
    await nextTurn();
    expect(bus.published).toEqual(["rt.a.out:1", "rt.a.out:5"]);
    // The backlog is told when it begins and when it ends, not for every message held back.
    expect(
      records()
        .filter((r) => r.msg !== "client frames not published")
        .map((r) => [r.level, r.msg, r.unsentBytes ?? r.heldBack]),
    ).toEqual([
      ["warn", "client frames held back: the bus has too much unsent", 9],
      ["info", "client frames taken again: the bus caught up", 3],
    ]);
  });

  it("never holds back a control message", async () => {
    const bus = recordingBus();
    const outbox = new TurnPublisher(bus, collectingLogger().log, { maxUnsentBytes: 10 });
    bus.unsent = 50;
    expect(outbox.publish("rt.a.out", frame(1))).toBe("backlogged");
    expect(outbox.publish("rt.a.out", frame(2), { control: true })).toBe("queued");
    await nextTurn();
    expect(bus.published).toEqual(["rt.a.out:2"]);
  });

  it("holds nothing back without a bound", () => {
    const bus = recordingBus();
    bus.unsent = Number.MAX_SAFE_INTEGER;
    const outbox = new TurnPublisher(bus, collectingLogger().log);
    expect(outbox.wouldHoldBack(1)).toBe(false);
    expect(outbox.publish("rt.a.out", frame(1))).toBe("queued");
  });
});
