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
  // The path of the value being visited, copied into a loc only for an issue.
  const path: (string | number)[] = [...loc];
  const visit = (v: unknown) => {
    if (issues.length >= MAX_ISSUES) return;
    if (typeof v === "string") {
      if (v.includes(NUL)) issues.push(valueError([...path], v, MESSAGE));
    } else if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        path.push(i);
        visit(v[i]);
        path.pop();
      }
    } else if (v !== null && typeof v === "object") {
      for (const key in v) {
        if (!Object.hasOwn(v, key)) continue;
        if (key.includes(NUL)) issues.push(valueError([...path, key, "[key]"], key, MESSAGE));
        path.push(key);
        visit((v as Record<string, unknown>)[key]);
        path.pop();
      }
    }
  };
  visit(value);
  return issues.slice(0, MAX_ISSUES);
}

/** The same for query parameters (names and values) or path parameters. */
export function nulParamIssues(
  params: URLSearchParams | Record<string, string>,
  source: "query" | "path",
): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const check = (value: string, name: string) => {
    if (name.includes(NUL)) issues.push(valueError([source, name], name, MESSAGE));
    if (value.includes(NUL)) issues.push(valueError([source, name], value, MESSAGE));
  };
  if (params instanceof URLSearchParams) params.forEach(check);
  else for (const name in params) if (Object.hasOwn(params, name)) check(params[name] as string, name);
  return issues;
}
