import { once } from "node:events";
import { createServer, type Server, Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket, WebSocketServer } from "ws";
import { turnWrites } from "../src/ws/turn-writes.js";

/** A connected pair of loopback sockets; `server` is the gateway's side. */
async function socketPair(): Promise<{ server: Socket; client: Socket; close: () => Promise<void> }> {
  const listener: Server = createServer();
  listener.listen(0, "127.0.0.1");
  await once(listener, "listening");
  const address = listener.address();
  if (!address || typeof address === "string") throw new Error("no port");
  const accepted = once(listener, "connection");
  const client = new Socket();
  client.connect(address.port, "127.0.0.1");
  const [server] = (await accepted) as [Socket];
  return {
    server,
    client,
    close: async () => {
      client.destroy();
      server.destroy();
      listener.close();
      await once(listener, "close");
    },
  };
}

/** Counts the socket's calls into its stream implementation: each one is one write system call. */
function countWrites(socket: Socket) {
  const counts = { write: 0, writev: 0, chunks: [] as number[] };
  const s = socket as unknown as Record<string, (...args: unknown[]) => unknown>;
  const write = s._write?.bind(socket);
  const writev = s._writev?.bind(socket);
  s._write = (...args) => {
    counts.write++;
    return write?.(...args);
  };
  s._writev = (chunks, ...rest) => {
    counts.writev++;
    counts.chunks.push((chunks as unknown[]).length);
    return writev?.(chunks, ...rest);
  };
  return counts;
}

async function received(socket: Socket, bytes: number): Promise<string> {
  let text = "";
  while (text.length < bytes) text += String((await once(socket, "data"))[0]);
  return text;
}

let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => {
  await cleanup?.();
  cleanup = undefined;
});

describe("turnWrites", () => {
  it("sends what one turn wrote in one write, and a later turn's in another", async () => {
    const pair = await socketPair();
    cleanup = pair.close;
    const counts = countWrites(pair.server);
    const hold = turnWrites(pair.server);
    for (const text of ["a", "bb", "ccc"]) {
      hold();
      pair.server.write(text);
    }
    expect(counts).toEqual({ write: 0, writev: 0, chunks: [] });
    expect(await received(pair.client, 6)).toBe("abbccc");
    expect(counts).toEqual({ write: 0, writev: 1, chunks: [3] });

    hold();
    pair.server.write("d");
    expect(await received(pair.client, 1)).toBe("d");
    expect(counts.write + counts.writev).toBe(2);
  });

  it("writes each frame of a turn on its own without it (what it saves)", async () => {
    const pair = await socketPair();
    cleanup = pair.close;
    const counts = countWrites(pair.server);
    for (const text of ["a", "bb", "ccc"]) pair.server.write(text);
    expect(await received(pair.client, 6)).toBe("abbccc");
    expect(counts.write + counts.writev).toBeGreaterThan(1);
  });

  it("puts a turn's WebSocket messages in one write, each still a message of its own", async () => {
    const wss = new WebSocketServer({ port: 0, host: "127.0.0.1" });
    await once(wss, "listening");
    const address = wss.address();
    if (!address || typeof address === "string") throw new Error("no port");
    const client = new WebSocket(`ws://127.0.0.1:${address.port}`);
    const [ws, req] = (await once(wss, "connection")) as [WebSocket, { socket: Socket }];
    cleanup = async () => {
      client.terminate();
      await new Promise((resolve) => wss.close(resolve));
    };
    await once(client, "open");
    const counts = countWrites(req.socket);
    const messages: string[] = [];
    const all = new Promise<void>((resolve) =>
      client.on("message", (data) => {
        messages.push(String(data));
        if (messages.length === 3) resolve();
      }),
    );
    const hold = turnWrites(req.socket);
    for (const text of ['{"n":1}', '{"n":2}', '{"n":3}']) {
      hold();
      ws.send(text);
    }
    await all;
    expect(messages).toEqual(['{"n":1}', '{"n":2}', '{"n":3}']);
    expect(counts.write + counts.writev).toBe(1);
  });
});
