import { invalidRequest } from "./errors.js";

/**
 * The database-level guard against bad input: a value Postgres refuses to store because of what it is
 * (SQLSTATE class 22, "data exception": text with a NUL character, JSON with \u0000, a number out of
 * range) is the caller's fault, answered like any other invalid request (400), never as a 500. Input
 * checks at the edges (the gateway's schemas) catch these first; this catches whatever got past them.
 */
export function inputErrorOf(err: unknown) {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== "string" || !code.startsWith("22")) return undefined;
  if (code === "22021" || code === "22P05") {
    return invalidRequest("text must not contain NUL characters (\\u0000)", { reason: "INVALID_TEXT" });
  }
  if (code === "22003") return invalidRequest("a number is out of range", { reason: "OUT_OF_RANGE" });
  return invalidRequest("a value in the request is not valid", { reason: "INVALID_VALUE" });
}
