import { describe, expect, it } from "vitest";
import { andThen, InFlight } from "../src/in-flight.js";

describe("InFlight.call", () => {
  it("runs a synchronous handler at once and keeps no promise of it", () => {
    const inFlight = new InFlight();
    const failures: unknown[] = [];
    let ran = false;
    inFlight.call(
      () => {
        ran = true;
      },
      (err) => failures.push(err),
    );
    expect(ran).toBe(true);
    expect(inFlight.size).toBe(0);
    expect(failures).toEqual([]);
  });

  it("hands a synchronous throw to `failed`", () => {
    const inFlight = new InFlight();
    const failures: unknown[] = [];
    const boom = new Error("boom");
    inFlight.call(
      () => {
        throw boom;
      },
      (err) => failures.push(err),
    );
    expect(failures).toEqual([boom]);
    expect(inFlight.size).toBe(0);
  });

  it("tracks a handler's promise until it settles, and hands its rejection to `failed`", async () => {
    const inFlight = new InFlight();
    const failures: unknown[] = [];
    let reject: (err: Error) => void = () => {};
    inFlight.call(
      () =>
        new Promise<void>((_, r) => {
          reject = r;
        }),
      (err) => failures.push(err),
    );
    expect(inFlight.size).toBe(1);
    let idle = false;
    const waiting = inFlight.idle().then(() => {
      idle = true;
    });
    await Promise.resolve();
    expect(idle).toBe(false);
    const late = new Error("late");
    reject(late);
    await waiting;
    expect(failures).toEqual([late]);
    expect(inFlight.size).toBe(0);
  });
});

describe("andThen", () => {
  it("calls on at once for a value, and after the promise for a promise", async () => {
    expect(andThen(2, (n) => n * 3)).toBe(6);
    const later = andThen(Promise.resolve(2), (n) => n * 3);
    expect(later).toBeInstanceOf(Promise);
    expect(await later).toBe(6);
  });
});
