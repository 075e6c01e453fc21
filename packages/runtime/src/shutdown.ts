import type { Logger } from "./log.js";

/**
 * Runs `stop` once on SIGTERM or SIGINT, then exits. A second signal exits at once.
 * Returns a function that removes the handlers (for tests).
 */
export function onShutdownSignal(log: Logger, stop: () => Promise<void>): () => void {
  let stopping = false;
  const handler = (signal: NodeJS.Signals) => {
    if (stopping) {
      log.warn("second signal, exiting now", { signal });
      process.exit(1);
    }
    stopping = true;
    log.info("shutting down", { signal });
    stop().then(
      () => process.exit(0),
      (err) => {
        log.error("shutdown failed", { err });
        process.exit(1);
      },
    );
  };
  process.on("SIGTERM", handler);
  process.on("SIGINT", handler);
  return () => {
    process.off("SIGTERM", handler);
    process.off("SIGINT", handler);
  };
}
