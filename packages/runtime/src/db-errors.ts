import { invalidRequest } from "./errors.js";
import { PIPELINE_CLOSED } from "./pipelined-pool.js";

/**
 * Whether an error means the database could not be reached (it is down, restarting, or the connection
 * broke), as opposed to a query it refused. Such a failure is temporary: services answer it as
 * Unavailable (the gateway's 503), never as an internal error.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  if (err instanceof AggregateError && err.errors.some(isDatabaseUnavailable)) return true;
  const code = (err as { code?: unknown }).code;
  if (typeof code === "string") {
    // Postgres: connection exceptions (class 08), shutdown and start-up (57P01-57P03), too many
    // connections (53300).
    if (code.startsWith("08") || ["57P01", "57P02", "57P03", "53300"].includes(code)) return true;
    if (NETWORK_CODES.has(code)) return true;
  }
  return NODE_PG_MESSAGES.some((m) => err.message.includes(m));
}

const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "EHOSTUNREACH",
  "ENOTFOUND",
]);

/** What node-postgres says when a connection ends or cannot be had (it gives no code for these). */
const NODE_PG_MESSAGES = [
  "Connection terminated",
  "timeout exceeded when trying to connect",
  "Client has encountered a connection error and is not queryable",
  "Client was closed and is not queryable",
  "Cannot use a pool after calling end on the pool",
  // ...and what runtime's pipelined connections say once closed (pipelined-pool.ts).
  PIPELINE_CLOSED,
];

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
