import { describe, expect, it } from "vitest";
import { checkKeySpread } from "../src/backend/prepare.js";

describe("checkKeySpread (BENCH_API_KEYS, BENCH_SPACES, BENCH_AVATAR)", () => {
  it("takes one key, many keys in one space, and many spaces minting a public avatar", () => {
    expect(() => checkKeySpread({ apiKeys: 1, spaces: 1, avatar: "own" })).not.toThrow();
    expect(() => checkKeySpread({ apiKeys: 300, spaces: 1, avatar: "own" })).not.toThrow();
    expect(() => checkKeySpread({ apiKeys: 300, spaces: 300, avatar: "public" })).not.toThrow();
  });

  it("refuses fewer keys than spaces, no space, numbers that are not whole, and an own avatar over spaces", () => {
    expect(() => checkKeySpread({ apiKeys: 2, spaces: 3, avatar: "public" })).toThrow(/at least the spaces/);
    expect(() => checkKeySpread({ apiKeys: 1, spaces: 0, avatar: "public" })).toThrow(/whole numbers/);
    expect(() => checkKeySpread({ apiKeys: Number.NaN, spaces: 1, avatar: "public" })).toThrow(
      /whole numbers/,
    );
    expect(() => checkKeySpread({ apiKeys: 1.5, spaces: 1, avatar: "public" })).toThrow(/whole numbers/);
    expect(() => checkKeySpread({ apiKeys: 4, spaces: 2, avatar: "own" })).toThrow(
      /seen by that space alone/,
    );
  });
});
