import { type Loc, type ValidationIssue, valueError } from "./issues.js";

const NUL = "\u0000";
const MESSAGE = "text must not contain NUL characters (\\u0000)";
/** Enough to show the problem; a body full of NULs does not make a huge answer. */
const MAX_ISSUES = 20;

/**
 * Every string of a request (path and query parameters, body values and keys, at any depth) that holds
 * a NUL character, as a 422 entry at its loc (`[..., key, "[key]"]` for a key, as pydantic places dict
 * key errors). Postgres cannot store NUL in text, and no field of this API needs one: one check here
 * covers every route, whether a schema reads the field or ignores it.
 */
export function nulIssues(value: unknown, loc: Loc): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const visit = (v: unknown, at: Loc) => {
    if (issues.length >= MAX_ISSUES) return;
    if (typeof v === "string") {
      if (v.includes(NUL)) issues.push(valueError(at, v, MESSAGE));
    } else if (Array.isArray(v)) {
      for (const [i, item] of v.entries()) visit(item, [...at, i]);
    } else if (v !== null && typeof v === "object") {
      for (const [key, item] of Object.entries(v)) {
        if (key.includes(NUL)) issues.push(valueError([...at, key, "[key]"], key, MESSAGE));
        visit(item, [...at, key]);
      }
    }
  };
  visit(value, loc);
  return issues.slice(0, MAX_ISSUES);
}

/** The same for query parameters (names and values) or path parameters. */
export function nulParamIssues(
  params: URLSearchParams | Record<string, string>,
  source: "query" | "path",
): ValidationIssue[] {
  const entries = params instanceof URLSearchParams ? [...params.entries()] : Object.entries(params);
  return entries.flatMap(([name, value]) => [
    ...(name.includes(NUL) ? [valueError([source, name], name, MESSAGE)] : []),
    ...(value.includes(NUL) ? [valueError([source, name], value, MESSAGE)] : []),
  ]);
}
