import { kindForStatus } from "../http-errors.js";
import { ProviderError } from "../types.js";

/**
 * How a streaming speech provider's failures map onto ProviderError kinds beyond HTTP statuses
 * (../http-errors.ts): the words of error texts and WebSocket close codes.
 */

export type ProviderErrorKind = ProviderError["kind"];

const RATE_WORDS =
  /quota|rate.?limit|too many|concurren|limit.?exceeded|throttl|insufficient.?(credit|balance|fund)|out of credits/i;
const AUTH_WORDS = /api.?key|unauthori[sz]ed|authenticat|forbidden|permission|invalid.?token|auth_error/i;

/** Classifies an error text; `fallback` when its words say nothing about limits or credentials. */
export function kindFromText(text: string, fallback: ProviderErrorKind = "unavailable"): ProviderErrorKind {
  if (RATE_WORDS.test(text)) return "rate_limited";
  if (AUTH_WORDS.test(text)) return "unauthorized";
  return fallback;
}

/** The error for a socket that closed before the stream finished. */
export function errorFromClose(provider: string, code: number, reason: string): ProviderError {
  const detail = reason ? `: ${reason}` : "";
  if (code === 1006) return new ProviderError(provider, "connection closed abruptly", "unavailable");
  // Private-use codes carrying an HTTP status, either way it is usually written: 4401/4429 or 4001/4029.
  if (code >= 4000 && code < 5000) {
    const status = code - 4000 >= 400 ? code - 4000 : code - 3600;
    return new ProviderError(
      provider,
      `closed with ${code}${detail}`,
      kindFromText(reason, kindForStatus(status)),
    );
  }
  // 1008 (policy violation) carries limits, bad keys and bad requests alike: its reason tells them apart.
  if (code === 1008)
    return new ProviderError(provider, `closed with 1008${detail}`, kindFromText(reason, "bad_request"));
  if (code === 1013)
    return new ProviderError(provider, `closed with 1013 (try again later)${detail}`, "rate_limited");
  if (code === 1000) {
    return new ProviderError(provider, `closed before the end of the stream${detail}`, kindFromText(reason));
  }
  return new ProviderError(provider, `closed with ${code}${detail}`, kindFromText(reason));
}

export function malformed(provider: string, what: string, cause?: unknown): ProviderError {
  return new ProviderError(provider, `malformed frame: ${what}`, "unavailable", { cause });
}
