import type { DynamicVariables } from "@avatar/contracts/common";
import { invalidRequest } from "@avatar/runtime";
import { type JsonValue, toJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";

/** Values that fill `${name}` placeholders of a context's prompt and opening text. */
export type Variables = Record<string, string>;

export const MAX_ENTRIES = 50;
export const MAX_KEY_LENGTH = 64;
export const MAX_VALUE_LENGTH = 1000;

/** Python counts characters as code points. */
const length = (text: string) => [...text].length;

function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** The map as plain JSON values (strings, numbers, booleans). */
export function variablesJson(dv: DynamicVariables | undefined): Record<string, JsonValue> {
  const out: Record<string, JsonValue> = {};
  for (const [key, value] of Object.entries(dv?.values ?? {})) setOwn(out, key, toJson(ValueSchema, value));
  return out;
}

/**
 * The per-session dynamic_variables of a voice agent reference for a managed agent (interface.md
 * rule 4): string values only, at most 50 entries, keys up to 64 and values up to 1000 characters.
 */
export function checkOverrideVariables(dv: DynamicVariables, field: string): Variables {
  const entries = Object.entries(variablesJson(dv));
  if (entries.length > MAX_ENTRIES) {
    throw invalidRequest(`${field} may have at most ${MAX_ENTRIES} entries, not ${entries.length}`, {
      field,
    });
  }
  const out: Variables = {};
  for (const [key, value] of entries) {
    if (length(key) > MAX_KEY_LENGTH) {
      throw invalidRequest(
        `${field}: key '${key.slice(0, 80)}' is longer than ${MAX_KEY_LENGTH} characters`,
        {
          field,
        },
      );
    }
    if (typeof value !== "string") {
      throw invalidRequest(
        `${field}.${key} must be a string for a managed agent, not ${JSON.stringify(value)}`,
        {
          field: `${field}.${key}`,
        },
      );
    }
    if (length(value) > MAX_VALUE_LENGTH) {
      throw invalidRequest(`${field}.${key} is longer than ${MAX_VALUE_LENGTH} characters`, {
        field: `${field}.${key}`,
      });
    }
    setOwn(out, key, value);
  }
  return out;
}

/** Stored or top-level variables as text (a stored number or boolean fills a placeholder as written). */
export function asVariables(dv: DynamicVariables | undefined): Variables {
  const out: Variables = {};
  for (const [key, value] of Object.entries(variablesJson(dv))) {
    setOwn(out, key, typeof value === "string" ? value : JSON.stringify(value));
  }
  return out;
}

/** Later maps win. */
export function mergeVariables(...maps: Variables[]): Variables {
  const out: Variables = {};
  for (const map of maps) for (const [key, value] of Object.entries(map)) setOwn(out, key, value);
  return out;
}

/** Replaces every `${name}` whose name has a value; other text stays as written. */
export function fillPlaceholders(text: string, vars: Variables): string {
  return text.replace(/\$\{([^{}]*)\}/g, (whole, name: string) =>
    Object.hasOwn(vars, name) ? (vars[name] ?? whole) : whole,
  );
}

/** The required names (from the context) that have no value, in the context's order. */
export function missingVariables(required: readonly string[], vars: Variables): string[] {
  return required.filter((name) => !Object.hasOwn(vars, name));
}

/** The map as the proto message of the session config. */
export function variablesProto(vars: Variables) {
  const values: Record<string, { kind: { case: "stringValue"; value: string } }> = {};
  for (const [key, value] of Object.entries(vars))
    setOwn(values, key, { kind: { case: "stringValue", value } });
  return { values };
}
