import { createMemoryBus } from "@avatar/bus";
import { Registry } from "prom-client";
import { afterAll, describe, expect, it } from "vitest";
import { meterBus } from "../src/metrics/bus.js";
import { metricsText } from "../src/metrics/registry.js";
import { subjectLabel } from "../src/metrics/subjects.js";
import { talliedCounter } from "../src/metrics/tallied.js";

/** The value of one series in the exposition text (0 when absent). */
function seriesValue(text: string, name: string, labels: Record<string, string>): number {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`)) continue;
    if (wanted.every((w) => line.includes(w))) return Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return 0;
}

describe("talliedCounter", () => {
  it("shows what was tallied at each read, once", async () => {
    const registry = new Registry();
    const c = talliedCounter({
      name: "test_tallied_total",
      help: "test",
      labelNames: ["kind", "outcome"] as const,
      registers: [registry],
    });
    c.tallyOf("a", "ok").n += 2;
    c.tallyOf("a", "ok").n++;
    c.tallyOf("b", "error").n++;
    const first = await registry.metrics();
    expect(seriesValue(first, "test_tallied_total", { kind: "a", outcome: "ok" })).toBe(3);
    expect(seriesValue(first, "test_tallied_total", { kind: "b", outcome: "error" })).toBe(1);
    c.tallyOf("a", "ok").n++;
    const second = await registry.metrics();
    expect(seriesValue(second, "test_tallied_total", { kind: "a", outcome: "ok" })).toBe(4);
    expect(seriesValue(second, "test_tallied_total", { kind: "b", outcome: "error" })).toBe(1);
  });

  it("refuses a label set of another size than its label names", () => {
    const c = talliedCounter({
      name: "test_tallied_arity_total",
      help: "test",
      labelNames: ["kind", "outcome"] as const,
      registers: [new Registry()],
    });
    expect(() => c.tallyOf("a")).toThrow(/takes 2 label values, got 1/);
    expect(() => c.tallyOf("a", "ok", "extra")).toThrow(/got 3/);
    expect(c.tallyOf("a", "ok").n).toBe(0);
  });
});

describe("meterBus", () => {
  const bus = meterBus(createMemoryBus({ logger: () => {} }), "metered-test");
  afterAll(() => bus.close());

  it("counts publishes and handled messages by outcome, sync and async handlers alike", async () => {
    const id = crypto.randomUUID();
    const labels = (outcome: string) => ({
      service: "metered-test",
      kind: "core",
      subject: "t.*.m",
      outcome,
    });
    const before = await metricsText();
    let handled = 0;
    bus.subscribe(`t.${id}.m`, (m) => {
      handled++;
      if (m.data[0] === 1) throw new Error("sync failure");
    });
    bus.subscribe(`t.${id}.m`, async (m) => {
      await new Promise((r) => setTimeout(r, 1));
      handled++;
      if (m.data[0] === 1) throw new Error("async failure");
    });
    bus.publish(`t.${id}.m`, new Uint8Array([0]));
    bus.publish(`t.${id}.m`, new Uint8Array([1]));
    for (let i = 0; i < 200 && handled < 4; i++) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setTimeout(r, 20));
    const after = await metricsText();
    const grew = (name: string, l: Record<string, string>) =>
      seriesValue(after, name, l) - seriesValue(before, name, l);
    expect(grew("avatar_bus_consumed_total", labels("ok"))).toBe(2);
    expect(grew("avatar_bus_consumed_total", labels("error"))).toBe(2);
    expect(
      grew("avatar_bus_published_total", { service: "metered-test", kind: "core", subject: "t.*.m" }),
    ).toBe(2);
  });

  it("answers a request through a synchronous server and counts it as served", async () => {
    const id = crypto.randomUUID();
    bus.serve(`t.${id}.echo`, (m) => m.data);
    const reply = await bus.request(`t.${id}.echo`, new Uint8Array([7]), { timeoutMs: 5_000 });
    expect([...reply]).toEqual([7]);
    const text = await metricsText();
    expect(
      seriesValue(text, "avatar_bus_consumed_total", {
        service: "metered-test",
        kind: "serve",
        subject: "t.*.echo",
        outcome: "ok",
      }),
    ).toBeGreaterThanOrEqual(1);
  });
});

describe("subjectLabel", () => {
  it("shows ids as * and keeps the other tokens, the same on a second look", () => {
    const subject = `rt.${crypto.randomUUID()}.in`;
    expect(subjectLabel(subject)).toBe("rt.*.in");
    expect(subjectLabel(subject)).toBe("rt.*.in");
    expect(subjectLabel("events.sessions.ended")).toBe("events.sessions.ended");
  });
});
