/**
 * A JSON decoder that fails the way CPython's `json.loads` does (C scanner, Python 3.13 messages), so
 * a 422 `json_invalid` entry carries the same message and character offset as FastAPI's. Differences
 * kept on purpose: NaN, Infinity and -Infinity are refused ("Expecting value"), and nesting deeper than
 * MAX_DEPTH fails (Python raises RecursionError there, which FastAPI answers with a 400).
 */
import { setOwn } from "./object.js";

export type DecodeResult =
  | { ok: true; value: unknown }
  | { ok: false; reason: "syntax" | "depth"; message: string; position: number };

export const MAX_DEPTH = 1000;

class DecodeError {
  constructor(
    readonly message: string,
    readonly index: number,
    readonly reason: "syntax" | "depth" = "syntax",
  ) {}
}

const ESCAPES: Record<string, string> = {
  '"': '"',
  "\\": "\\",
  "/": "/",
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
};
const HEX4 = /^[0-9a-fA-F]{4}$/;

const isDigit = (ch: string | undefined) => ch !== undefined && ch >= "0" && ch <= "9";
const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;
const isLowSurrogate = (code: number) => code >= 0xdc00 && code <= 0xdfff;

/** Python counts positions in code points; a JS string index counts UTF-16 units. */
function codePointIndex(text: string, index: number): number {
  let position = 0;
  for (let i = 0; i < index; i++) {
    if (isHighSurrogate(text.charCodeAt(i)) && isLowSurrogate(text.charCodeAt(i + 1)) && i + 1 < index) i++;
    position++;
  }
  return position;
}

class Scanner {
  private depth = 0;

  constructor(private readonly s: string) {}

  skipWhitespace(i: number): number {
    let j = i;
    while (j < this.s.length) {
      const ch = this.s[j];
      if (ch !== " " && ch !== "\t" && ch !== "\n" && ch !== "\r") break;
      j++;
    }
    return j;
  }

  value(i: number): [unknown, number] {
    const { s } = this;
    const ch = s[i];
    if (ch === '"') return this.string(i + 1);
    if (ch === "{" || ch === "[") {
      if (++this.depth > MAX_DEPTH) throw new DecodeError("Maximum nesting depth exceeded", i, "depth");
      const result = ch === "{" ? this.object(i + 1) : this.array(i + 1);
      this.depth--;
      return result;
    }
    if (s.startsWith("null", i)) return [null, i + 4];
    if (s.startsWith("true", i)) return [true, i + 4];
    if (s.startsWith("false", i)) return [false, i + 5];
    if (ch === "-" || isDigit(ch)) return this.number(i);
    throw new DecodeError("Expecting value", i);
  }

  private number(start: number): [number, number] {
    const { s } = this;
    let j = start;
    if (s[j] === "-") j++;
    if (s[j] === "0") j++;
    else if (isDigit(s[j])) while (isDigit(s[j])) j++;
    else throw new DecodeError("Expecting value", start);
    // A fraction needs a digit after the point; an exponent without digits is left unread.
    if (s[j] === "." && isDigit(s[j + 1])) {
      j += 2;
      while (isDigit(s[j])) j++;
    }
    if ((s[j] === "e" || s[j] === "E") && j < s.length - 1) {
      const exponentStart = j;
      j++;
      if ((s[j] === "-" || s[j] === "+") && j < s.length - 1) j++;
      while (isDigit(s[j])) j++;
      if (!isDigit(s[j - 1])) j = exponentStart;
    }
    return [Number(s.slice(start, j)), j];
  }

  private string(start: number): [string, number] {
    const { s } = this;
    const begin = start - 1;
    let out = "";
    let j = start;
    for (;;) {
      const chunkStart = j;
      while (j < s.length) {
        const code = s.charCodeAt(j);
        if (code === 0x22 || code === 0x5c || code < 0x20) break;
        j++;
      }
      if (j >= s.length) throw new DecodeError("Unterminated string starting at", begin);
      out += s.slice(chunkStart, j);
      if (s[j] === '"') return [out, j + 1];
      if (s[j] !== "\\") throw new DecodeError("Invalid control character at", j);
      j++;
      if (j >= s.length) throw new DecodeError("Unterminated string starting at", begin);
      const escaped = s[j] ?? "";
      if (escaped !== "u") {
        const replacement = ESCAPES[escaped];
        if (replacement === undefined) throw new DecodeError("Invalid \\escape", j - 1);
        out += replacement;
        j++;
        continue;
      }
      // j is at the "u"; CPython wants four hex digits and at least one character after them.
      const end = j + 5;
      const hex = s.slice(j + 1, end);
      if (end >= s.length || !HEX4.test(hex)) throw new DecodeError("Invalid \\uXXXX escape", j);
      let code = Number.parseInt(hex, 16);
      j = end;
      if (isHighSurrogate(code) && end + 6 < s.length && s[end] === "\\" && s[end + 1] === "u") {
        const low = s.slice(end + 2, end + 6);
        if (!HEX4.test(low)) throw new DecodeError("Invalid \\uXXXX escape", end + 1);
        const lowCode = Number.parseInt(low, 16);
        if (isLowSurrogate(lowCode)) {
          code = 0x10000 + ((code - 0xd800) << 10) + (lowCode - 0xdc00);
          j = end + 6;
        }
      }
      out += String.fromCodePoint(code);
    }
  }

  private object(start: number): [Record<string, unknown>, number] {
    const { s } = this;
    const out: Record<string, unknown> = {};
    let j = this.skipWhitespace(start);
    if (s[j] === "}") return [out, j + 1];
    for (;;) {
      if (s[j] !== '"') throw new DecodeError("Expecting property name enclosed in double quotes", j);
      const [key, afterKey] = this.string(j + 1);
      j = this.skipWhitespace(afterKey);
      if (s[j] !== ":") throw new DecodeError("Expecting ':' delimiter", j);
      const [value, afterValue] = this.value(this.skipWhitespace(j + 1));
      setOwn(out, key, value);
      j = this.skipWhitespace(afterValue);
      if (s[j] === "}") return [out, j + 1];
      if (s[j] !== ",") throw new DecodeError("Expecting ',' delimiter", j);
      const comma = j;
      j = this.skipWhitespace(j + 1);
      if (s[j] === "}") throw new DecodeError("Illegal trailing comma before end of object", comma);
    }
  }

  private array(start: number): [unknown[], number] {
    const { s } = this;
    const out: unknown[] = [];
    let j = this.skipWhitespace(start);
    if (s[j] === "]") return [out, j + 1];
    for (;;) {
      const [value, afterValue] = this.value(j);
      out.push(value);
      j = this.skipWhitespace(afterValue);
      if (s[j] === "]") return [out, j + 1];
      if (s[j] !== ",") throw new DecodeError("Expecting ',' delimiter", j);
      const comma = j;
      j = this.skipWhitespace(j + 1);
      if (s[j] === "]") throw new DecodeError("Illegal trailing comma before end of array", comma);
    }
  }
}

/**
 * A document of at most this many characters cannot nest deeper than MAX_DEPTH: each level takes an
 * opening and a closing bracket.
 */
const SHALLOW_LENGTH = 2 * MAX_DEPTH + 1;

/**
 * Decodes one JSON document; `position` of a failure is a code point offset, as Python reports it.
 * JSON.parse accepts the same documents as the scanner, with the same values (the property test in
 * schema-property.test.ts checks it), but for nesting: so a short document that JSON.parse accepts is
 * done natively, and the scanner runs for the rest, to find the failure and say it in Python's words.
 */
export function decodeJson(text: string): DecodeResult {
  if (text.length <= SHALLOW_LENGTH) {
    try {
      return { ok: true, value: JSON.parse(text) };
    } catch {
      // scanJson finds what is wrong.
    }
  }
  return scanJson(text);
}

/** The scanner alone: what decodeJson answers, for any document. */
export function scanJson(text: string): DecodeResult {
  const scanner = new Scanner(text);
  try {
    const [value, end] = scanner.value(scanner.skipWhitespace(0));
    const rest = scanner.skipWhitespace(end);
    if (rest !== text.length) throw new DecodeError("Extra data", rest);
    return { ok: true, value };
  } catch (error) {
    if (!(error instanceof DecodeError)) throw error;
    return {
      ok: false,
      reason: error.reason,
      message: error.message,
      position: codePointIndex(text, error.index),
    };
  }
}
