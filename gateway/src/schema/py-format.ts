/**
 * Rendering of values the way pydantic's messages show them. Error messages are compared byte for byte
 * with a Python service, so quoting, number formatting and list joining follow Python and pydantic-core.
 */

// Python's str.isprintable() is false for these categories (the plain space excepted).
const NON_PRINTABLE = /[\p{C}\p{Z}]/u;

function escapeChar(ch: string): string {
  const code = ch.codePointAt(0) ?? 0;
  if (ch === "\n") return "\\n";
  if (ch === "\r") return "\\r";
  if (ch === "\t") return "\\t";
  if (code <= 0xff) return `\\x${code.toString(16).padStart(2, "0")}`;
  if (code <= 0xffff) return `\\u${code.toString(16).padStart(4, "0")}`;
  return `\\U${code.toString(16).padStart(8, "0")}`;
}

/** Python's repr() of a str: single quotes unless only double quotes avoid escaping. */
export function pyReprString(text: string): string {
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of text) {
    if (ch === "\\") out += "\\\\";
    else if (ch === quote) out += `\\${quote}`;
    else if (ch !== " " && NON_PRINTABLE.test(ch)) out += escapeChar(ch);
    else out += ch;
  }
  return out + quote;
}

/** Python's repr() of a float: shortest round-trip digits, exponent form below 1e-4 and from 1e16. */
function pyReprFloat(value: number): string {
  if (Number.isNaN(value)) return "nan";
  if (!Number.isFinite(value)) return value > 0 ? "inf" : "-inf";
  const [mantissa = "", exp = "0"] = value.toExponential().split("e");
  const exponent = Number(exp);
  if (exponent < -4 || exponent >= 16) {
    const sign = exponent < 0 ? "-" : "+";
    return `${mantissa}e${sign}${String(Math.abs(exponent)).padStart(2, "0")}`;
  }
  const text = positional(value);
  return text.includes(".") ? text : `${text}.0`;
}

/**
 * Python's repr() of a decoded JSON value. JSON integers become Python ints, so an integral number
 * prints without a fraction; the JS value cannot tell `1.0` from `1`.
 */
export function pyRepr(value: unknown): string {
  if (value === null || value === undefined) return "None";
  if (value === true) return "True";
  if (value === false) return "False";
  if (typeof value === "string") return pyReprString(value);
  if (typeof value === "number") {
    return Number.isInteger(value) ? BigInt(value).toString() : pyReprFloat(value);
  }
  if (Array.isArray(value)) return `[${value.map(pyRepr).join(", ")}]`;
  if (typeof value === "object") {
    const entries = Object.entries(value).map(([k, v]) => `${pyReprString(k)}: ${pyRepr(v)}`);
    return `{${entries.join(", ")}}`;
  }
  return String(value);
}

/** Python's str(): strings as they are, everything else as repr(). */
export function pyStr(value: unknown): string {
  return typeof value === "string" ? value : pyRepr(value);
}

/** Decimal notation without exponent, shortest round-trip digits (JS toString expanded). */
function positional(value: number): string {
  const text = String(value);
  const match = /^(-?)(\d+)(?:\.(\d+))?e([+-]\d+)$/.exec(text);
  if (!match) return text;
  const [, sign = "", int = "", frac = "", exp = "0"] = match;
  const digits = int + frac;
  const point = int.length + Number(exp);
  if (point <= 0) return `${sign}0.${"0".repeat(-point)}${digits}`;
  if (point >= digits.length) return sign + digits + "0".repeat(point - digits.length);
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
}

/**
 * A bound as pydantic-core prints it inside a message: integers plainly, floats in Rust's Display
 * form (positional, no trailing `.0`), e.g. 1, 0.8, 0.00001.
 */
export function boundText(value: number): string {
  return positional(value);
}

/** "'a'", "'a' or 'b'", "'a', 'b' or 'c'" */
export function joinOr(items: readonly string[]): string {
  if (items.length <= 1) return items.join("");
  return `${items.slice(0, -1).join(", ")} or ${items[items.length - 1]}`;
}

export function plural(count: number, word: string): string {
  return count === 1 ? word : `${word}s`;
}

/** Python's str.title() for ASCII field names: "avatar_id" -> "Avatar Id" (pydantic's default title). */
export function titleFromName(name: string): string {
  return name
    .replace(/_/g, " ")
    .toLowerCase()
    .replace(/(^|[^a-z])([a-z])/g, (_all, before: string, letter: string) => before + letter.toUpperCase());
}

/** Length in code points, as Python's len() counts a str. */
export function charLength(text: string): number {
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code >= 0xd800 && code <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
    }
    count++;
  }
  return count;
}
