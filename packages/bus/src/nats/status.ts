import type { NatsConnection } from "@nats-io/transport-node";
import type { BusStatus } from "../bus.js";
import { type BusLogger, errorText } from "../logger.js";

/** Follows the client's status events; returns a getter for the current state. */
export function watchStatus(nc: NatsConnection, logger: BusLogger): () => BusStatus {
  let status: BusStatus = nc.isClosed() ? "closed" : "connected";
  void (async () => {
    for await (const event of nc.status()) {
      switch (event.type) {
        case "disconnect":
          if (status === "connected")
            logger("warn", "nats disconnected; reconnecting", { server: event.server });
          if (status !== "closed") status = "reconnecting";
          break;
        case "reconnecting":
          if (status !== "closed") status = "reconnecting";
          break;
        case "reconnect":
          if (status !== "closed") status = "connected";
          logger("info", "nats reconnected", { server: event.server });
          break;
        case "close":
          status = "closed";
          break;
        case "error":
          logger("error", "nats error", { error: errorText(event.error) });
          break;
        case "staleConnection":
          logger("warn", "nats connection stale; reconnecting");
          break;
        default:
          break;
      }
    }
  })().catch((err: unknown) => logger("error", "nats status watcher failed", { error: errorText(err) }));
  void nc.closed().then(() => {
    status = "closed";
  });
  return () => status;
}
