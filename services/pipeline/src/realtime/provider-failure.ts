import { randomUUID } from "node:crypto";
import { ProviderError } from "@avatar/providers";
import type { Logger } from "@avatar/runtime";

/** What a client is told for each kind of provider failure. */
const PUBLIC_TEXT: Record<ProviderError["kind"], string> = {
  rate_limited: "the provider is limiting requests, try again shortly",
  unauthorized: "the provider did not accept the key",
  bad_request: "the provider refused the request",
  unavailable: "the provider is not available",
};

/**
 * The sentence a client event carries for a failure: a fixed text for its kind plus a request id, never
 * the provider's own words (an upstream error body, a connection error naming an address and port).
 * The detail goes to the log under that request id; it was scrubbed of key values by the provider
 * wrappers (providers/redact.ts) before it got here.
 */
export function publicFailure(log: Logger, what: string, err: unknown): string {
  const requestId = randomUUID();
  if (err instanceof ProviderError) {
    log.warn(`${what} failed`, {
      provider: err.provider,
      kind: err.kind,
      detail: err.message,
      request_id: requestId,
    });
    return `${what} failed: ${PUBLIC_TEXT[err.kind]} (request id ${requestId})`;
  }
  log.error(`${what} failed`, { err, request_id: requestId });
  return `${what} failed (request id ${requestId})`;
}
