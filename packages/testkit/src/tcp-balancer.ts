import { createServer, type Server, type Socket, connect as tcpConnect } from "node:net";

export interface TcpBalancer {
  port: number;
  /** `http://127.0.0.1:<port>`. */
  url: string;
  close(): Promise<void>;
}

/**
 * What a Kubernetes Service does for a deployment's replicas, for tests on loopback: each connection
 * goes to the next target in turn, and to the one after when a target refuses (its process is down).
 */
export async function startTcpBalancer(targets: number[]): Promise<TcpBalancer> {
  let next = 0;
  const sockets = new Set<Socket>();
  const track = (s: Socket) => {
    sockets.add(s);
    s.once("close", () => sockets.delete(s));
  };

  function forward(client: Socket, tried: number): void {
    if (tried >= targets.length) {
      client.destroy();
      return;
    }
    const port = targets[next++ % targets.length] as number;
    const upstream = tcpConnect({ host: "127.0.0.1", port });
    track(upstream);
    let connected = false;
    upstream.once("connect", () => {
      connected = true;
      client.pipe(upstream).pipe(client);
      client.resume();
    });
    upstream.on("error", () => {
      if (!connected) return forward(client, tried + 1);
      client.destroy();
    });
    upstream.once("close", () => {
      if (connected) client.destroy();
    });
  }

  const server: Server = createServer((client) => {
    track(client);
    client.pause();
    client.on("error", () => client.destroy());
    forward(client, 0);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
