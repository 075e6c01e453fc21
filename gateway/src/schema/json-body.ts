/**
 * The request body as FastAPI reads it: no bytes at all is a missing body, bytes that are not JSON are
 * one `json_invalid` entry at ["body", <character offset>], JSON `null` counts as missing too.
 */
import { failure, issue, missing, type ParseResult, type ValidationIssue } from "./issues.js";
import { decodeJson } from "./json-decode.js";
import type { Schema } from "./schema.js";

export type JsonBodyResult =
  | { ok: true; value: unknown }
  | {
      ok: false;
      /**
       * "empty": no body (answer with the `missing` entry). "syntax": not JSON. "encoding" (not UTF-8) and
       * "depth" (nested too deep) are answered by FastAPI with a 400; here they are `json_invalid` too.
       */
      reason: "empty" | "syntax" | "encoding" | "depth";
      issues: ValidationIssue[];
    };

function jsonInvalid(position: number, error: string): ValidationIssue {
  return issue("json_invalid", ["body", position], "JSON decode error", {}, { error });
}

const hex = (byte: number) => `0x${byte.toString(16).padStart(2, "0")}`;

/** Allowed range of the second byte after a lead byte (the later ones are always 0x80-0xbf). */
function secondByteRange(lead: number): [number, number] {
  if (lead === 0xe0) return [0xa0, 0xbf];
  if (lead === 0xed) return [0x80, 0x9f];
  if (lead === 0xf0) return [0x90, 0xbf];
  if (lead === 0xf4) return [0x80, 0x8f];
  return [0x80, 0xbf];
}

/** The first invalid UTF-8 sequence, described as Python's UnicodeDecodeError does. */
function utf8Fault(bytes: Uint8Array): { start: number; error: string } | undefined {
  let i = 0;
  while (i < bytes.length) {
    const lead = bytes[i] ?? 0;
    const size =
      lead < 0x80
        ? 1
        : lead >= 0xc2 && lead <= 0xdf
          ? 2
          : lead >= 0xe0 && lead <= 0xef
            ? 3
            : lead >= 0xf0 && lead <= 0xf4
              ? 4
              : 0;
    const describe = (end: number, reason: string) => {
      const where =
        end - i === 1 ? `byte ${hex(lead)} in position ${i}` : `bytes in position ${i}-${end - 1}`;
      return { start: i, error: `'utf-8' codec can't decode ${where}: ${reason}` };
    };
    if (size === 0) return describe(i + 1, "invalid start byte");
    for (let k = 1; k < size; k++) {
      if (i + k >= bytes.length) return describe(bytes.length, "unexpected end of data");
      const byte = bytes[i + k] ?? 0;
      const [low, high] = k === 1 ? secondByteRange(lead) : [0x80, 0xbf];
      if (byte < low || byte > high) return describe(i + k, "invalid continuation byte");
    }
    i += size;
  }
  return undefined;
}

const UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** The text of UTF-8 bytes; only bytes that are not UTF-8 go through utf8Fault, for Python's message. */
function decodeUtf8(bytes: Uint8Array): string | JsonBodyResult {
  try {
    return UTF8.decode(bytes);
  } catch {
    const fault = utf8Fault(bytes);
    if (!fault) throw new Error("TextDecoder refused bytes that utf8Fault finds valid");
    const position = [...UTF8.decode(bytes.subarray(0, fault.start))].length;
    return { ok: false, reason: "encoding", issues: [jsonInvalid(position, fault.error)] };
  }
}

/** Decodes a request body. A leading UTF-8 byte order mark is skipped, as Python's json.loads(bytes) does. */
export function parseJsonBody(raw: string | Uint8Array | null | undefined): JsonBodyResult {
  if (raw === null || raw === undefined || raw.length === 0) {
    return { ok: false, reason: "empty", issues: [missing(["body"], null)] };
  }
  let text: string;
  if (typeof raw === "string") {
    text = raw.startsWith("\ufeff") ? raw.slice(1) : raw;
  } else {
    const bytes = raw[0] === 0xef && raw[1] === 0xbb && raw[2] === 0xbf ? raw.subarray(3) : raw;
    const decoded = decodeUtf8(bytes);
    if (typeof decoded !== "string") return decoded;
    text = decoded;
  }
  const decoded = decodeJson(text);
  if (decoded.ok) return decoded;
  return { ok: false, reason: decoded.reason, issues: [jsonInvalid(decoded.position, decoded.message)] };
}

/** The whole FastAPI body step: decode, treat an absent or null body as missing, validate at ["body"]. */
export function parseBody<T>(schema: Schema<T>, raw: string | Uint8Array | null | undefined): ParseResult<T> {
  const body = parseJsonBody(raw);
  if (!body.ok) return failure(...body.issues);
  if (body.value === null) return failure(missing(["body"], null));
  return schema.parse(body.value, ["body"]);
}
