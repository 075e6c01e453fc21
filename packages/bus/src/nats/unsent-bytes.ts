import type { NatsConnection } from "@nats-io/transport-node";

/** The fields of nats.js 3.3 (nats-core's ProtocolHandler, transport-node's NodeTransport) read here. */
interface ClientInternals {
  protocol?: {
    outbound?: { size(): number };
    transport?: { socket?: { writableLength?: number } };
  };
}

/**
 * Bytes published on `nc` that have not reached the kernel yet. nats.js gathers publishes in its
 * protocol handler's `outbound` buffer (all of them while it is disconnected), and its Node transport
 * writes them to the socket without looking at backpressure, so what the kernel does not take waits in
 * the socket's writable buffer. Neither has a public accessor; nats.test.ts checks that both still count.
 */
export function unsentBytes(nc: NatsConnection): number {
  const protocol = (nc as unknown as ClientInternals).protocol;
  return (protocol?.outbound?.size() ?? 0) + (protocol?.transport?.socket?.writableLength ?? 0);
}
