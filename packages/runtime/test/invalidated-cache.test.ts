import { createMemoryBus } from "@avatar/bus";
import { describe, expect, it, vi } from "vitest";
import { changeAnnouncer, InvalidatedCache, publishInvalidation } from "../src/invalidated-cache.js";

describe("InvalidatedCache", () => {
  it("loads once, then answers from memory until the entry expires", async () => {
    let t = 0;
    let loads = 0;
    const cache = new InvalidatedCache<string>(undefined, "cache.test.a", { ttlMs: 100, now: () => t });
    const load = async () => `v${++loads}`;
    expect(await cache.get("k", load)).toBe("v1");
    expect(await cache.get("k", load)).toBe("v1");
    t = 100;
    expect(await cache.get("k", load)).toBe("v2");
  });

  it("shares one load between concurrent callers and keeps no absent value", async () => {
    let loads = 0;
    const cache = new InvalidatedCache<string>(undefined, "cache.test.b", { ttlMs: 60_000 });
    const load = async () => {
      loads++;
      return undefined;
    };
    await Promise.all([cache.get("k", load), cache.get("k", load), cache.get("k", load)]);
    expect(loads).toBe(1);
    await cache.get("k", load);
    expect(loads).toBe(2);
  });

  it("drops an invalidated entry in every process that caches it, through the bus", async () => {
    const bus = createMemoryBus();
    const here = new InvalidatedCache<string>(bus, "cache.test.c", { ttlMs: 60_000 });
    const there = new InvalidatedCache<string>(bus, "cache.test.c", { ttlMs: 60_000 });
    let value = "old";
    const load = async () => value;
    expect(await here.get("k", load)).toBe("old");
    expect(await there.get("k", load)).toBe("old");
    value = "new";
    here.invalidate("k");
    expect(await here.get("k", load)).toBe("new");
    // The message reaches the other cache asynchronously, as it would from another process.
    for (let i = 0; i < 100 && (await there.get("k", load)) !== "new"; i++) {
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(await there.get("k", load)).toBe("new");
    await here.close();
    await there.close();
    await bus.close();
  });

  it("publishInvalidation resolves once the caches listening have dropped the value (another service's write)", async () => {
    const bus = createMemoryBus();
    const reader = new InvalidatedCache<string>(bus, "cache.test.f", { ttlMs: 60_000 });
    let value = "old";
    const load = async () => value;
    expect(await reader.get("k", load)).toBe("old");
    value = "new";
    await publishInvalidation(bus, "cache.test.f", "k");
    // At once, no waiting: what the writer answers after this is never followed by the old value.
    expect(await reader.get("k", load)).toBe("new");
    await reader.close();
    await bus.close();
  });

  it("does not keep a value whose load an invalidation overtook", async () => {
    const cache = new InvalidatedCache<string>(undefined, "cache.test.d", { ttlMs: 60_000 });
    let release: (v: string) => void = () => {};
    const slow = cache.get("k", () => new Promise<string>((r) => (release = r)));
    cache.invalidate("k");
    release("stale");
    expect(await slow).toBe("stale");
    expect(await cache.get("k", async () => "fresh")).toBe("fresh");
  });

  it("keeps at most maxEntries, dropping the oldest", async () => {
    let loads = 0;
    const cache = new InvalidatedCache<string>(undefined, "cache.test.e", { ttlMs: 60_000, maxEntries: 2 });
    const load = async () => `v${++loads}`;
    await cache.get("a", load);
    await cache.get("b", load);
    await cache.get("c", load);
    expect(await cache.get("b", load)).toBe("v2");
    expect(await cache.get("a", load)).toBe("v4");
  });
});

describe("publishInvalidation and changeAnnouncer", () => {
  it("announces the many ids of an import with one flush, and nothing for none", async () => {
    const bus = createMemoryBus();
    const reader = new InvalidatedCache<string>(bus, "cache.test.g", { ttlMs: 60_000 });
    let version = "old";
    const load = async () => version;
    for (const key of ["a", "b", "c"]) expect(await reader.get(key, load)).toBe("old");
    version = "new";
    const flush = vi.spyOn(bus, "flush");
    await publishInvalidation(bus, "cache.test.g", []);
    expect(flush).not.toHaveBeenCalled();
    await publishInvalidation(bus, "cache.test.g", ["a", "b", "c"]);
    expect(flush).toHaveBeenCalledTimes(1);
    for (const key of ["a", "b", "c"]) expect(await reader.get(key, load)).toBe("new");
    await reader.close();
    await bus.close();
  });

  it("an announcer never fails the write it follows: a bus that cannot confirm is a warning naming the ids", async () => {
    const bus = createMemoryBus();
    await bus.close();
    const warnings: [string, Record<string, unknown> | undefined][] = [];
    const announce = changeAnnouncer(
      bus,
      { warn: (msg, fields) => warnings.push([msg, fields]) },
      "cache.test.h",
      "avatar_id",
    );
    await expect(announce(["a1", "a2"])).resolves.toBeUndefined();
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.[1]).toMatchObject({ subject: "cache.test.h", avatar_id: ["a1", "a2"] });
  });
});
