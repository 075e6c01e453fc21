import { ProviderError } from "./types.js";

type Kind = ProviderError["kind"];

/** The ProviderError kind for an HTTP status: what the session tells the user when a provider refuses. */
export function kindForStatus(status: number): Kind {
  if (status === 401 || status === 403) return "unauthorized";
  if (status === 429) return "rate_limited";
  if (status >= 400 && status < 500) return "bad_request";
  return "unavailable";
}

/**
 * A ProviderError for a refused HTTP request or WebSocket handshake. `detail` is the provider's own
 * message when its body had one; `retryAfter` is the raw Retry-After header (seconds or an HTTP date).
 */
export function errorForStatus(
  provider: string,
  status: number,
  detail?: string,
  retryAfter?: string | null,
): ProviderError {
  let message = `${provider}: HTTP ${status}`;
  if (detail) message += ` ${detail}`;
  const wait = retryAfterSeconds(retryAfter);
  if (status === 429 && wait !== undefined) message += ` (retry after ${wait} s)`;
  return new ProviderError(provider, message, kindForStatus(status));
}

/** Retry-After is either a number of seconds or an HTTP date; answers whole seconds from now. */
export function retryAfterSeconds(header: string | null | undefined, now = Date.now()): number | undefined {
  if (!header) return undefined;
  const trimmed = header.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, Math.ceil((date - now) / 1000));
}

/** The `error.message` of the common JSON error body `{"error": {"message": ...}}`, if the text is one. */
export function errorBodyMessage(text: string): string | undefined {
  try {
    const body = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown };
    if (typeof body.error === "string") return body.error;
    if (typeof body.error?.message === "string") return body.error.message;
    if (typeof body.message === "string") return body.message;
  } catch {
    // not JSON: fall through to the raw text
  }
  const raw = text.trim();
  return raw ? raw.slice(0, 300) : undefined;
}

/**
 * The kind for an error object carried inside a stream or event (`{type, code, message}`), as the
 * chat-completions and realtime protocols send them.
 */
export function kindForErrorObject(error: { type?: unknown; code?: unknown }): Kind {
  const words = `${String(error.type ?? "")} ${String(error.code ?? "")}`.toLowerCase();
  if (/rate_limit|insufficient_quota|quota|resource_exhausted/.test(words)) return "rate_limited";
  if (/invalid_api_key|authentication|permission|unauthorized/.test(words)) return "unauthorized";
  if (/invalid_request|invalid_value|bad_request|unknown_parameter/.test(words)) return "bad_request";
  return "unavailable";
}
