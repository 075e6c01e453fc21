import http from "node:http";
import type { AddressInfo } from "node:net";
import { closeGracefully, trackResponses } from "@avatar/runtime";
import { build, type Gateway, type GatewayDeps } from "./app.js";
import { routes } from "./routes.js";

export interface RunningGateway {
  gateway: Gateway;
  server: http.Server;
  url: string;
  port: number;
  close(): Promise<void>;
}

/** The public gateway on node:http (the event WebSocket needs HTTP/1.1 upgrades). */
export async function startGateway(
  deps: Omit<GatewayDeps, "routes"> & { routes?: GatewayDeps["routes"]; port: number; host: string },
): Promise<RunningGateway> {
  const gateway = await build({ ...deps, routes: deps.routes ?? routes });
  const server = http.createServer(gateway.handle);
  server.keepAliveTimeout = 65_000;
  trackResponses(server);
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
    close: () => closeGracefully(server, 10_000),
  };
}
