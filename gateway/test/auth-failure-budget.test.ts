import { describe, expect, it } from "vitest";
import { AuthFailureBudget } from "../src/auth/failure-budget.js";
import { MemoryCounterStore, RateLimiter } from "../src/ratelimit/index.js";

const quiet = { warn: () => {} };

function budget(limit: number, clock: { now: number }) {
  const limiter = new RateLimiter({ store: new MemoryCounterStore(), logger: quiet, now: () => clock.now });
  return new AuthFailureBudget(limiter, limit, () => clock.now);
}

const refuse = () => new Error("refused");

describe("AuthFailureBudget", () => {
  it("lets at most `limit` lookups of one IP run at once, counting those under way as failures", async () => {
    const clock = { now: 1_000_000 };
    const b = budget(3, clock);
    let calls = 0;
    const never = () => {
      calls++;
      return new Promise<null>(() => {});
    };
    for (let i = 0; i < 3; i++) void b.lookup("1.2.3.4", never, refuse);
    await expect(b.lookup("1.2.3.4", never, refuse)).rejects.toThrow("refused");
    expect(calls).toBe(3);
    // Another IP has its own budget.
    void b.lookup("5.6.7.8", never, refuse);
    expect(calls).toBe(4);
  });

  it("refuses for the rest of the window once failures spent it, and lets a new window through", async () => {
    const clock = { now: 2_000_000 };
    const b = budget(2, clock);
    const fail = async () => null;
    await b.lookup("ip", fail, refuse);
    await b.lookup("ip", fail, refuse);
    await expect(b.lookup("ip", fail, refuse)).rejects.toThrow("refused");
    clock.now += 1000;
    expect(await b.lookup("ip", async () => ({ ok: true }), refuse)).toEqual({ ok: true });
  });

  it("does not count a valid credential as a failure", async () => {
    const clock = { now: 3_000_000 };
    const b = budget(1, clock);
    for (let i = 0; i < 5; i++)
      expect(await b.lookup("ip", async () => "principal", refuse)).toBe("principal");
  });

  it("tells when to come back: a 429 decision for the rest of the window", async () => {
    const clock = { now: 4_000_400 };
    const b = budget(1, clock);
    await b.lookup("ip", async () => null, refuse);
    const seen: unknown[] = [];
    await b
      .lookup(
        "ip",
        async () => null,
        (d) => {
          seen.push(d);
          return refuse();
        },
      )
      .catch(() => {});
    expect(seen).toEqual([{ allowed: false, limit: 1, remaining: 0, resetSeconds: 1, failedOpen: false }]);
  });
});
