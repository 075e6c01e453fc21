import { describe, expect, it } from "vitest";
import { MemoryCounterStore } from "../src/ratelimit/index.js";

describe("MemoryCounterStore", () => {
  it("counts per key and per window", async () => {
    const store = new MemoryCounterStore();
    expect(await store.increment("a", 100)).toBe(1);
    expect(await store.increment("a", 100)).toBe(2);
    expect(await store.increment("b", 100)).toBe(1);
    expect(await store.increment("a", 101)).toBe(1);
    expect(await store.increment("a", 101)).toBe(2);
  });

  it("still counts the previous window for a request that started before the boundary", async () => {
    const store = new MemoryCounterStore();
    await store.increment("a", 100);
    await store.increment("a", 101);
    expect(await store.increment("a", 100)).toBe(2);
  });

  it("drops windows older than the previous one, so memory stays bounded", async () => {
    const store = new MemoryCounterStore();
    for (let w = 0; w < 1000; w++) {
      for (let k = 0; k < 5; k++) await store.increment(`key-${k}`, w);
      expect(store.windowCount).toBeLessThanOrEqual(2);
    }
    expect(await store.increment("key-0", 999)).toBe(2);
  });
});
