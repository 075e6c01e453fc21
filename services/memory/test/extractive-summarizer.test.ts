import { TranscriptEntrySchema } from "@avatar/contracts/sessions";
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { extractiveSummary } from "../src/extractive-summarizer.js";
import { formatTranscript, type TranscriptLine, toLines } from "../src/transcript-lines.js";
import { tripTranscript } from "./support.js";

const lines = (rows: string[][]): TranscriptLine[] =>
  rows.map(([role, text]) => ({ role: role ?? "", text: text ?? "" }));

describe("extractiveSummary", () => {
  it("keeps the user's and the avatar's sentences that carry the conversation's recurring words", () => {
    const summary = extractiveSummary(lines(tripTranscript));
    const [user, avatar, ...rest] = summary.split("\n");
    expect(rest).toEqual([]);
    expect(user).toMatch(/^User: /);
    expect(avatar).toMatch(/^Avatar: /);
    // "Lisbon", "hotels near the river", "Sintra" recur: the sentences naming them are chosen; greetings
    // and short answers ("Five days.") are not.
    expect(user).toBe(
      "User: My name is Dana and I am planning a trip to Lisbon in May. Great, please remember that I prefer small hotels near the river.",
    );
    expect(avatar).toContain("add a day trip to Sintra");
    expect(avatar).toContain("Noted: small hotels near the river");
    expect(summary).not.toContain("Hi!");
    expect(summary).not.toContain("Five days.");
  });

  it("is deterministic and keeps spoken order within a role", () => {
    const a = extractiveSummary(lines(tripTranscript));
    expect(extractiveSummary(lines(tripTranscript))).toBe(a);
    const user = a.split("\n")[0] ?? "";
    expect(user.indexOf("Lisbon in May")).toBeLessThan(user.indexOf("hotels"));
  });

  it("is bounded whatever the length of the conversation", () => {
    const long = Array.from({ length: 400 }, (_, i) => [
      i % 2 === 0 ? "user" : "avatar",
      `Sentence number ${i} about gardening tomatoes and compost ${"very ".repeat(60)}long.`,
    ]);
    const summary = extractiveSummary(lines(long));
    expect(summary.length).toBeLessThanOrEqual(2 * (2 * 200 + 10));
    for (const part of summary.split("\n")) expect(part.length).toBeLessThanOrEqual(2 * 201 + 10);
    expect(summary).toContain("…");
  });

  it("takes one sentence per role from a one-line conversation, and nothing from nothing", () => {
    expect(extractiveSummary(lines([["user", "I need a quote for ten solar panels."]]))).toBe(
      "User: I need a quote for ten solar panels.",
    );
    expect(extractiveSummary([])).toBe("");
  });

  it("does not repeat a sentence said twice, and labels other roles by name", () => {
    const summary = extractiveSummary(
      lines([
        ["user", "Order the blue bicycle. Order the blue bicycle."],
        ["agent", "The blue bicycle is ordered."],
      ]),
    );
    expect(summary).toBe("User: Order the blue bicycle.\nAgent: The blue bicycle is ordered.");
  });
});

describe("transcript lines", () => {
  it("normalises roles and whitespace and drops empty turns", () => {
    const entries = [
      create(TranscriptEntrySchema, {
        role: " User ",
        transcript: "  hello\n there ",
        absoluteTimestamp: 1n,
      }),
      create(TranscriptEntrySchema, { role: "avatar", transcript: "   ", absoluteTimestamp: 2n }),
    ];
    expect(toLines(entries)).toEqual([{ role: "user", text: "hello there" }]);
  });

  it("leaves out the middle of a conversation that is too long, keeping its start and end", () => {
    const many = Array.from({ length: 100 }, (_, i) => ({ role: "user", text: `line ${i}` }));
    const text = formatTranscript(many, 200);
    expect(text.length).toBeLessThanOrEqual(210);
    expect(text.startsWith("user: line 0\n")).toBe(true);
    expect(text.endsWith("user: line 99")).toBe(true);
    expect(text).toContain("[...]");
  });
});
