import http from "node:http";
import type { Transport } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { unaryTransport } from "../src/unary-transport.js";

/** The services' transport, on a keep-alive pool of its own. */
export const servicesTransport = (baseUrl: string): Transport =>
  unaryTransport({ baseUrl, interceptors: [], agent: new http.Agent({ keepAlive: true }) });

/**
 * The clients every case of a unary call is sent through: the services' and connect-node's, whose
 * outcome is the one to match.
 */
export const clientTransports: [string, (baseUrl: string) => Transport][] = [
  ["unaryTransport", servicesTransport],
  [
    "connect-node's client",
    (baseUrl) => createConnectTransport({ baseUrl, httpVersion: "1.1", useBinaryFormat: true }),
  ],
];
