import http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { CatalogService } from "@avatar/contracts/catalog";
import { Code, createClient } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errorDetailOf } from "../src/errors.js";
import { freePort } from "../src/net.js";
import { BIG, catalogRoutes } from "./catalog-test-service.js";
import { clientTransports, servicesTransport } from "./client-transports.js";
import { caught } from "./support.js";

/**
 * The services' transport for unary calls, against a real connect-node server on port 0, next to
 * connect-node's own client: each case must end the same way through both (the codes callers rely on).
 */

let server: http.Server;
let url: string;
const connections: Socket[] = [];

beforeAll(async () => {
  const routes = connectNodeAdapter({ routes: catalogRoutes({ stopped: [], intercepted: [] }) });
  server = http.createServer((req, res) => {
    // A server that dies in the middle of its answer.
    if (req.url?.endsWith("/ListPublicAvatars")) {
      res.writeHead(200, { "content-type": "application/proto", "content-length": "1000" });
      res.write(Buffer.alloc(10));
      setTimeout(() => res.socket?.destroy(), 20);
      return;
    }
    routes(req, res);
  });
  server.on("connection", (socket) => connections.push(socket));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe.each(clientTransports)("a unary call through %s", (_name, transport) => {
  it("carries the request, its headers and a large answer", async () => {
    const client = createClient(CatalogService, transport(url));
    const res = await client.listLanguages({}, { headers: { "x-echo": "hello" } });
    expect(res.languages.map((l) => l.code)).toEqual(["en", "big"]);
    expect(res.languages[0]?.language).toBe("hello");
    expect(res.languages[1]?.language).toBe(BIG);
    const avatar = await client.getAvatar({ avatarId: "a1", spaceId: "s1" });
    expect(avatar.avatar).toMatchObject({ id: "a1", name: "s1" });
    // A request larger than one socket write.
    expect((await client.getAvatar({ avatarId: BIG })).avatar?.id).toBe(BIG);
  });

  it("passes the handler's error on with its code, message and detail", async () => {
    const client = createClient(CatalogService, transport(url));
    const err = await caught(client.getAvatar({ avatarId: "missing" }));
    expect(err.code).toBe(Code.NotFound);
    expect(err.rawMessage).toBe("Avatar not found");
    expect(errorDetailOf(err)?.field).toBe("avatar_id");
  });

  it("gives up at the deadline with DeadlineExceeded", async () => {
    const client = createClient(CatalogService, transport(url));
    const err = await caught(client.listLlmModels({}, { timeoutMs: 100 }));
    expect(err.code).toBe(Code.DeadlineExceeded);
  });

  it("stops when the caller aborts, with Canceled", async () => {
    const client = createClient(CatalogService, transport(url));
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const err = await caught(client.listLlmModels({}, { signal: controller.signal }));
    expect(err.code).toBe(Code.Canceled);
  });

  it("answers Unavailable when nothing listens at the peer's address", async () => {
    const client = createClient(CatalogService, transport(`http://127.0.0.1:${await freePort()}`));
    const err = await caught(client.listLanguages({}));
    expect(err.code).toBe(Code.Unavailable);
  });

  it("fails, not hangs, when the peer dies in the middle of its answer", async () => {
    const client = createClient(CatalogService, transport(url));
    const err = await caught(client.listPublicAvatars({}));
    expect(err.code).toBe(Code.Aborted);
  });
});

describe("unaryTransport", () => {
  it("keeps its connection alive from call to call", async () => {
    const client = createClient(CatalogService, servicesTransport(url));
    await client.getAvatar({ avatarId: "warm" });
    const before = connections.length;
    for (let i = 0; i < 20; i++) await client.getAvatar({ avatarId: `a${i}` });
    expect(connections.length).toBe(before);
  });

  it("answers many calls in flight at once, each its own", async () => {
    const client = createClient(CatalogService, servicesTransport(url));
    const ids = Array.from({ length: 50 }, (_, i) => `id-${i}`);
    const answers = await Promise.all(ids.map((avatarId) => client.getAvatar({ avatarId })));
    expect(answers.map((a) => a.avatar?.id)).toEqual(ids);
  });

  it("refuses a stream call, which no contract between the services has", async () => {
    const transport = servicesTransport(url);
    // No contract has a stream method: a unary one stands in for it.
    const method = CatalogService.method.listLanguages as unknown as Parameters<typeof transport.stream>[0];
    const err = await caught(
      transport.stream(method, undefined, undefined, undefined, (async function* () {})(), undefined),
    );
    expect(err.code).toBe(Code.Unimplemented);
  });
});
