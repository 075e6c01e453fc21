import { ProviderError } from "@avatar/providers";
import { countProviderError } from "../metrics/pipeline-metrics.js";
import type { SessionContext } from "../realtime/mode.js";
import { publicFailure } from "../realtime/provider-failure.js";

/**
 * How a failure reaches the client. `error` when something the client asked for (or the avatar's
 * answer) could not be done at all; `warning` when the session goes on degraded (a turn cut short after
 * some of it was spoken, recognition lost, memory unavailable). Either way the session keeps running.
 */
export type Severity = "error" | "warning";

const TYPES: Record<ProviderError["kind"], string> = {
  rate_limited: "rate_limited",
  unauthorized: "provider_unauthorized",
  bad_request: "provider_rejected",
  unavailable: "provider_unavailable",
};

/** True for the rejection an aborted operation throws (an interrupt, not a failure). */
export function isAbort(err: unknown, signal?: AbortSignal): boolean {
  if (signal?.aborted) return true;
  return err instanceof Error && err.name === "AbortError";
}

export function reportFailure(
  ctx: SessionContext,
  what: string,
  err: unknown,
  options: { severity: Severity; sourceEventId?: string | null },
): void {
  const sourceEventId = options.sourceEventId ?? null;
  countProviderError(err);
  const type = err instanceof ProviderError ? TYPES[err.kind] : "internal_error";
  const message = publicFailure(ctx.log, what, err);
  if (options.severity === "error") ctx.sendError(type, message, sourceEventId);
  else ctx.sendWarning(type, message, sourceEventId);
}
