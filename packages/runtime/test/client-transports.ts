import http from "node:http";
import type { Transport } from "@connectrpc/connect";
import { validateReadWriteMaxBytes } from "@connectrpc/connect/protocol";
import { createTransport } from "@connectrpc/connect/protocol-connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { http1UnaryClient } from "../src/http1-unary-client.js";
import { unaryTransport } from "../src/unary-transport.js";

/** connect's own Connect transport over the services' HTTP/1.1 client. */
export function http1UnaryClientTransport(baseUrl: string): Transport {
  return createTransport({
    baseUrl,
    httpClient: http1UnaryClient(new http.Agent({ keepAlive: true })),
    useBinaryFormat: true,
    interceptors: [],
    acceptCompression: [],
    sendCompression: null,
    ...validateReadWriteMaxBytes(undefined, undefined, undefined),
  });
}

/**
 * The clients every case of a unary call is sent through: the services' two and connect-node's, whose
 * outcome is the one to match.
 */
export const clientTransports: [string, (baseUrl: string) => Transport][] = [
  ["http1UnaryClient", http1UnaryClientTransport],
  [
    "unaryTransport",
    (baseUrl) =>
      unaryTransport({
        baseUrl,
        interceptors: [],
        agent: new http.Agent({ keepAlive: true }),
        streams: http1UnaryClientTransport(baseUrl),
      }),
  ],
  [
    "connect-node's client",
    (baseUrl) => createConnectTransport({ baseUrl, httpVersion: "1.1", useBinaryFormat: true }),
  ],
];
