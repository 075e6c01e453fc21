import { describe, expect, it } from "vitest";
import { TurnPublisher } from "../src/turn-publisher.js";
import { collectingLogger, nextTurn } from "./support.js";

const frame = (n: number) => new Uint8Array([n]);

/** A bus that records what it is given, in order, and refuses subjects named in `refused`. */
function recordingBus(refused: ReadonlySet<string> = new Set()) {
  const published: string[] = [];
  return {
    published,
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
    const outbox = new TurnPublisher(bus, log, "server frames");
    outbox.publish("rt.gone.out", frame(1));
    outbox.publish("rt.a.out", frame(2));
    outbox.publish("rt.gone.out", frame(3));
    await nextTurn();
    expect(bus.published).toEqual(["rt.a.out:2"]);
    const warnings = records().filter((r) => r.level === "warn");
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ msg: "server frames were not published", failed: 2 });
  });
});
