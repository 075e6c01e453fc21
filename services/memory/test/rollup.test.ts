import { describe, expect, it } from "vitest";
import { contentPreview } from "../src/mapping.js";
import { rollUp } from "../src/rollup.js";

const day = new Date("2026-11-20T10:00:00Z");
const episode = (n: number, summary: string) => ({ sequence_num: n, summary, created_at: day });

describe("rollUp", () => {
  it("lists every episode's summary in sequence order, whatever order they come in", () => {
    expect(rollUp([episode(2, "Second."), episode(1, "First.")], 1000)).toBe(
      "Session 1 (2026-11-20):\nFirst.\n\nSession 2 (2026-11-20):\nSecond.",
    );
    expect(rollUp([], 1000)).toBe("");
  });

  it("leaves the oldest episodes out when the content would exceed its bound", () => {
    const text = rollUp(
      Array.from({ length: 10 }, (_, i) => episode(i + 1, `Summary ${i + 1} ${"x".repeat(80)}`)),
      400,
    );
    expect(text.length).toBeLessThanOrEqual(400);
    expect(text.startsWith("(7 earlier sessions left out)\n\nSession 8 (")).toBe(true);
    expect(text).toContain("Summary 10");
    expect(text).not.toContain("Summary 7 ");
  });

  it("cuts a single episode longer than the bound", () => {
    const text = rollUp([episode(1, "y".repeat(1000))], 500);
    expect(Array.from(text)).toHaveLength(500);
    expect(text.endsWith("…")).toBe(true);
  });
});

describe("contentPreview", () => {
  it("keeps up to 200 characters and never splits a character", () => {
    expect(contentPreview("short")).toBe("short");
    const exact = "é".repeat(200);
    expect(contentPreview(exact)).toBe(exact);
    const emoji = "😀".repeat(250);
    expect(contentPreview(emoji)).toBe(`${"😀".repeat(200)}…`);
  });
});
