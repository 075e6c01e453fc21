import { describe, expect, it } from "vitest";
import { VerifiedTokens } from "../src/verified-tokens.js";

describe("VerifiedTokens", () => {
  it("answers a token until the second it ends, and only the exact token", () => {
    const tokens = new VerifiedTokens<string>();
    tokens.set("a.b.c", "gateway", 1_000, 900);
    expect(tokens.get("a.b.c", 999)).toBe("gateway");
    expect(tokens.get("a.b.c", 1_000)).toBeUndefined();
    expect(tokens.get("a.b.C", 999)).toBeUndefined();
  });

  it("when full, makes room by dropping the expired entries first", () => {
    const tokens = new VerifiedTokens<number>(3);
    tokens.set("old", 1, 100, 50);
    tokens.set("live-1", 2, 500, 50);
    tokens.set("live-2", 3, 500, 50);
    tokens.set("new", 4, 500, 200);
    expect(tokens.get("old", 99)).toBeUndefined();
    expect([tokens.get("live-1", 200), tokens.get("live-2", 200), tokens.get("new", 200)]).toEqual([2, 3, 4]);
  });

  it("when full of live entries, starts again rather than growing", () => {
    const tokens = new VerifiedTokens<number>(2);
    tokens.set("a", 1, 500, 0);
    tokens.set("b", 2, 500, 0);
    tokens.set("c", 3, 500, 0);
    expect([tokens.get("a", 1), tokens.get("b", 1), tokens.get("c", 1)]).toEqual([undefined, undefined, 3]);
  });

  it("forgets everything on clear", () => {
    const tokens = new VerifiedTokens<number>();
    tokens.set("a", 1, 500, 0);
    tokens.clear();
    expect(tokens.get("a", 1)).toBeUndefined();
  });
});
