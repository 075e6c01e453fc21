import { randomUUID } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { closeGracefully, observedBus, trackResponses } from "@avatar/runtime";
import { build, type Gateway, type GatewayDeps } from "./app.js";
import { clientErrorAnswer, endWithError } from "./http/raw-response.js";
import { routes } from "./routes.js";
import { attachRealtimeBridge } from "./ws/bridge.js";

export interface RunningGateway {
  gateway: Gateway;
  server: http.Server;
  url: string;
  port: number;
  close(): Promise<void>;
}

/** The public gateway on node:http, with the event WebSocket on its HTTP/1.1 upgrades. */
export async function startGateway(
  deps: Omit<GatewayDeps, "routes"> & { routes?: GatewayDeps["routes"]; port: number; host: string },
): Promise<RunningGateway> {
  const bus = observedBus(deps.bus, "gateway");
  const gateway = await build({ ...deps, bus, routes: deps.routes ?? routes });
  const server = http.createServer(gateway.handle);
  server.keepAliveTimeout = 65_000;
  // Requests Node's parser refuses get the envelope too (Node's own answers have empty bodies).
  server.on("clientError", (err: NodeJS.ErrnoException, socket) => {
    if (err.code === "ECONNRESET") return socket.destroy();
    const { status, message } = clientErrorAnswer(err);
    endWithError(socket, status, message, { "X-Request-Id": randomUUID() });
  });
  trackResponses(server);
  const bridge = attachRealtimeBridge(server, {
    clients: deps.clients,
    bus,
    log: deps.log,
    config: deps.config,
    limiter: gateway.limiter,
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(deps.port, deps.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const host = deps.host === "0.0.0.0" || deps.host === "::" ? "127.0.0.1" : deps.host;
  return {
    gateway,
    server,
    port,
    url: `http://${host}:${port}`,
    close: async () => {
      // Upgraded sockets are no longer the HTTP server's: they are closed first, or close would wait.
      await bridge.close();
      await closeGracefully(server, 10_000);
      await gateway.close();
    },
  };
}
