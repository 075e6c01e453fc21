import { ProviderError } from "@avatar/providers";
import { pipelineCapacity, pipelineSessions, providerErrors, sampleInto } from "@avatar/runtime";

/** The worker's room as gauges (capacity, sessions running), sampled at each scrape until `stop`. */
export function meterWorker(worker: { id: string; capacity: number; running: () => number }): () => void {
  const labels = { worker: worker.id };
  const stops = [
    sampleInto(pipelineCapacity, () => [{ labels, value: worker.capacity }]),
    sampleInto(pipelineSessions, () => [{ labels, value: worker.running() }]),
  ];
  return () => {
    for (const stop of stops) stop();
  };
}

/** A failure reported to a session counts when a provider caused it. */
export function countProviderError(err: unknown): void {
  if (err instanceof ProviderError) providerErrors.inc({ provider: err.provider, kind: err.kind });
}
