import { BusClosedError } from "./bus.js";

/**
 * open -> closing -> closed. While closing, in-flight handlers may still publish, request and use KV
 * (their work must complete), but nothing new may subscribe.
 */
export class Lifecycle {
  #state: "open" | "closing" | "closed" = "open";
  #closing: Promise<void> | null = null;

  get closed(): boolean {
    return this.#state === "closed";
  }

  /** True from the moment close() is called. */
  get closing(): boolean {
    return this.#state !== "open";
  }

  /** For subscribe/serve/consume: only while open. */
  assertOpen(): void {
    if (this.#state !== "open") throw new BusClosedError();
  }

  /** For publish/request/KV: until fully closed. */
  assertUsable(): void {
    if (this.#state === "closed") throw new BusClosedError();
  }

  /** Runs `shutdown` once; later calls share its promise. */
  close(shutdown: () => Promise<void>): Promise<void> {
    if (!this.#closing) {
      this.#state = "closing";
      this.#closing = shutdown().finally(() => {
        this.#state = "closed";
      });
    }
    return this.#closing;
  }
}
