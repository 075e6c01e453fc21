import { describe, expect, it } from "vitest";
import { espeakVoiceFor } from "../src/tts/espeak-voices.js";
import { splitSentences } from "../src/tts/sentences.js";
import { errorFromClose, kindFromText } from "../src/tts/ws-errors.js";

describe("splitSentences", () => {
  it("splits at sentence ends followed by a space, keeping the punctuation", () => {
    expect(splitSentences("Hello there. How are you?  Fine!  ")).toEqual([
      "Hello there.",
      "How are you?",
      "Fine!",
    ]);
    expect(splitSentences('He said "stop." Then left... Really?!')).toEqual([
      'He said "stop."',
      "Then left...",
      "Really?!",
    ]);
  });

  it("does not split at abbreviations, initials or decimals", () => {
    expect(splitSentences("Dr. Smith paid 3.50 dollars, e.g. for J. R. Tolkien's book. Next.")).toEqual([
      "Dr. Smith paid 3.50 dollars, e.g. for J. R. Tolkien's book.",
      "Next.",
    ]);
  });

  it("splits at the CJK full stops without spaces", () => {
    expect(splitSentences("こんにちは。元気ですか？はい")).toEqual(["こんにちは。", "元気ですか？", "はい"]);
  });

  it("cuts an overlong sentence at a clause mark, else at a space", () => {
    const clauses = `${"word ".repeat(20)}then, ${"more ".repeat(30)}`;
    const pieces = splitSentences(clauses, 120);
    for (const piece of pieces) expect(piece.length).toBeLessThanOrEqual(120);
    expect(pieces[0]?.endsWith("then,")).toBe(true);
    expect(pieces.join(" ")).toBe(clauses.trim());
    expect(splitSentences("x".repeat(25), 10)).toEqual(["x".repeat(10), "x".repeat(10), "x".repeat(5)]);
  });

  it("gives nothing for blank text", () => {
    expect(splitSentences(" \n\t ")).toEqual([]);
  });
});

describe("espeakVoiceFor", () => {
  it.each([
    ["en", "en-us"],
    ["en-US", "en-us"],
    ["en_GB", "en-gb"],
    ["en-AU", "en-gb"],
    ["fr", "fr-fr"],
    ["fr-CA", "fr-fr"],
    ["pt-BR", "pt-br"],
    ["pt", "pt"],
    ["es-MX", "es-419"],
    ["de-AT", "de"],
    ["zh", "cmn"],
    ["zh-Hant-TW", "cmn"],
    ["zh-HK", "yue"],
    ["ja", "ja"],
    ["no", "nb"],
    ["tlh", "en-us"],
    ["", "en-us"],
    [undefined, "en-us"],
  ])("maps %s to %s", (language, voice) => {
    expect(espeakVoiceFor(language)).toBe(voice);
  });
});

describe("error classification", () => {
  it.each([
    ["You have exceeded your quota", "rate_limited"],
    ["rate_limit_exceeded", "rate_limited"],
    ["Too many concurrent requests", "rate_limited"],
    ["Insufficient credits", "rate_limited"],
    ["Invalid API key", "unauthorized"],
    ["authentication failed", "unauthorized"],
    ["insufficient permissions", "unauthorized"],
    ["something broke", "unavailable"],
  ])("reads %j as %s", (text, kind) => {
    expect(kindFromText(text)).toBe(kind);
  });

  it.each([
    [1006, "", "unavailable"],
    [1008, "Invalid API key", "unauthorized"],
    [1008, "quota_exceeded", "rate_limited"],
    [1008, "Have not received a new text input within the timeout", "bad_request"],
    [1013, "", "rate_limited"],
    [4001, "", "unauthorized"],
    [4401, "", "unauthorized"],
    [4029, "", "rate_limited"],
    [4429, "", "rate_limited"],
    [4000, "", "bad_request"],
    [1011, "internal error", "unavailable"],
    [1000, "", "unavailable"],
  ])("maps close code %d (%j) to %s", (code, reason, kind) => {
    expect(errorFromClose("p", code, reason).kind).toBe(kind);
  });
});
