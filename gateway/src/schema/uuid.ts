import { failure, issue, type Loc, type ParseResult, success } from "./issues.js";
import type { JsonSchema } from "./json-schema.js";
import { type Mode, Schema } from "./schema.js";

const HEX = /^[0-9a-fA-F]$/;
const HYPHENATED = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const SIMPLE = /^[0-9a-fA-F]{32}$/;
const GROUP_STARTS = [0, 9, 14, 19, 24] as const;
const GROUP_LENGTHS = [8, 4, 4, 4, 12] as const;

const utf8Length = (text: string) => Buffer.byteLength(text, "utf8");

/** The accepted spellings of Rust's uuid crate: simple, hyphenated, {braced}, urn:uuid:-prefixed. */
function canonical(text: string): string | undefined {
  let body = text;
  if (text.length === 38 && text.startsWith("{") && text.endsWith("}")) body = text.slice(1, -1);
  else if (text.length === 45 && text.startsWith("urn:uuid:")) body = text.slice(9);
  if (HYPHENATED.test(body)) return body.toLowerCase();
  if (body === text && SIMPLE.test(body)) {
    const hex = body.toLowerCase();
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }
  return undefined;
}

/**
 * The explanation the uuid crate (as bundled in pydantic-core) gives for a string it cannot parse.
 * Positions and lengths are in UTF-8 bytes, positions 1-based. A braced or urn input of exactly the
 * right length is explained from its inner part alone, as the crate does.
 */
function explain(text: string): string {
  const bytes = utf8Length(text);
  if (bytes === 38 && text.startsWith("{") && text.endsWith("}")) return explain(text.slice(1, -1));
  if (bytes === 45 && text.startsWith("urn:uuid:")) return explain(text.slice(9));
  let body = text;
  let offset = 0;
  if (text.length >= 2 && text.startsWith("{") && text.endsWith("}")) {
    body = text.slice(1, -1);
    offset = 1;
  } else if (text.startsWith("urn:uuid:")) {
    body = text.slice(9);
    offset = 9;
  }
  let hyphens = 0;
  const hyphenAt: number[] = [];
  let byteIndex = 0;
  for (const ch of body) {
    if (ch === "-") {
      if (hyphens < 4) hyphenAt.push(byteIndex);
      hyphens++;
    } else if (!HEX.test(ch)) {
      return `invalid character: found \`${ch}\` at ${byteIndex + offset + 1}`;
    }
    byteIndex += utf8Length(ch);
  }
  if (hyphens === 0 && offset === 0) {
    return `invalid length: expected length 32 for simple format, found ${bytes}`;
  }
  if (hyphens !== 4) return `invalid group count: expected 5, found ${hyphens + 1}`;
  for (let group = 0; group < 4; group++) {
    const start = GROUP_STARTS[group] ?? 0;
    const end = hyphenAt[group] ?? 0;
    if (end !== (GROUP_STARTS[group + 1] ?? 0) - 1) {
      return `invalid group length in group ${group}: expected ${GROUP_LENGTHS[group]}, found ${end - start}`;
    }
  }
  // Mirrors the crate, which measures the last group against the whole input, prefix included.
  return `invalid group length in group 4: expected 12, found ${bytes - 24}`;
}

/** pydantic `UUID`: the parsed value is the canonical lower-case hyphenated form. */
export class UuidSchema extends Schema<string> {
  protected check(input: unknown, loc: Loc, mode: Mode): ParseResult<string> {
    // In strict (Python) mode pydantic wants a UUID object, so a string never matches there.
    if (typeof input !== "string" || mode.strict) {
      return failure(issue("uuid_type", loc, "UUID input should be a string, bytes or UUID object", input));
    }
    const value = canonical(input);
    if (value !== undefined) return success(value);
    const error = explain(input);
    return failure(issue("uuid_parsing", loc, `Input should be a valid UUID, ${error}`, input, { error }));
  }

  protected kindLabel(): string {
    return "uuid";
  }

  protected kindJsonSchema(): JsonSchema {
    return { type: "string", format: "uuid" };
  }
}

export const uuid = (): UuidSchema => new UuidSchema();
