import http from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import { CatalogService, GetAvatarRequestSchema } from "@avatar/contracts/catalog";
import { create, toBinary } from "@bufbuild/protobuf";
import { Code, createClient, type Interceptor } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errorDetailOf } from "../src/errors.js";
import { http1UnaryServer, type UnaryServerOptions } from "../src/http1-unary-server.js";
import { BIG, catalogRoutes, type Seen } from "./catalog-test-service.js";
import { clientTransports, servicesTransport } from "./client-transports.js";
import { caught, waitFor } from "./support.js";

/**
 * The services' Connect server against connect-node's adapter, serving the same routes through the same
 * interceptors: each case goes to both, through both clients and as raw HTTP, and must end the same way
 * (status, headers, body bytes). The catalog contract only lends its method shapes.
 */

function interceptor(seen: Seen): Interceptor {
  return (next) => async (req) => {
    seen.intercepted.push(`${req.method.name} ${new URL(req.url).pathname} ${req.header.get("x-echo")}`);
    const res = await next(req);
    res.header.set("x-intercepted", "yes");
    return res;
  };
}

const fallback: UnaryServerOptions["fallback"] = (_req, res) => {
  res.writeHead(404, { "content-type": "application/json" });
  res.end(JSON.stringify({ error: "not found" }));
};

interface Served {
  url: string;
  seen: Seen;
  server: http.Server;
}

async function serve(make: typeof http1UnaryServer | typeof connectNodeAdapter): Promise<Served> {
  const seen: Seen = { stopped: [], intercepted: [] };
  const server = http.createServer(
    make({ routes: catalogRoutes(seen), interceptors: [interceptor(seen)], fallback }),
  );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, server };
}

const servers: Record<string, Served> = {};
beforeAll(async () => {
  servers.ours = await serve(http1UnaryServer);
  servers.connectNode = await serve(connectNodeAdapter);
});
afterAll(async () => {
  for (const { server } of Object.values(servers)) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

describe.each(["ours", "connectNode"])("the %s server", (name) => {
  const served = () => servers[name] as Served;

  describe.each(clientTransports)("called through %s", (_client, transport) => {
    it("carries the request, its headers, a large answer and its headers and trailers", async () => {
      const client = createClient(CatalogService, transport(served().url));
      const headers = new Headers();
      const trailers = new Headers();
      const res = await client.listLanguages(
        {},
        {
          headers: { "x-echo": "hello" },
          onHeader: (h) => {
            for (const [k, v] of h) headers.set(k, v);
          },
          onTrailer: (t) => {
            for (const [k, v] of t) trailers.set(k, v);
          },
        },
      );
      expect(res.languages.map((l) => [l.code, l.language.length])).toEqual([
        ["en", 5],
        ["big", BIG.length],
      ]);
      expect(res.languages[0]?.language).toBe("hello");
      expect(headers.get("x-answer")).toBe("1");
      expect(headers.get("x-intercepted")).toBe("yes");
      expect(trailers.get("x-trailer")).toBe("2");
      expect(served().seen.intercepted).toContain(
        "ListLanguages /avatar.catalog.v1.CatalogService/ListLanguages hello",
      );
      // A request larger than one socket read.
      expect((await client.getAvatar({ avatarId: BIG, spaceId: "s1" })).avatar).toMatchObject({
        id: BIG,
        name: "s1",
      });
    });

    it("passes the handler's error on with its code, message, detail and metadata", async () => {
      const client = createClient(CatalogService, transport(served().url));
      const missing = await caught(client.getAvatar({ avatarId: "missing" }));
      expect([missing.code, missing.rawMessage]).toEqual([Code.NotFound, "Avatar not found"]);
      expect(errorDetailOf(missing)?.field).toBe("avatar_id");
      const refused = await caught(client.getAvatar({ avatarId: "metadata" }));
      expect([refused.code, refused.metadata.get("x-why")]).toEqual([Code.FailedPrecondition, "because"]);
      const crashed = await caught(client.getAvatar({ avatarId: "crash" }));
      expect([crashed.code, crashed.rawMessage]).toEqual([Code.Internal, "internal error"]);
    });

    it("stops the handler at the caller's deadline", async () => {
      const client = createClient(CatalogService, transport(served().url));
      const before = served().seen.stopped.length;
      const err = await caught(client.listLlmModels({}, { timeoutMs: 100 }));
      expect(err.code).toBe(Code.DeadlineExceeded);
      await waitFor("the handler stopped", () => served().seen.stopped.length > before);
      // The caller hangs up at the same moment: which of the two the server notices first is a race.
      expect([Code.DeadlineExceeded, Code.Canceled]).toContain(served().seen.stopped.at(-1));
    });

    it("stops the handler when the caller goes away", async () => {
      const client = createClient(CatalogService, transport(served().url));
      const before = served().seen.stopped.length;
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 50);
      const err = await caught(client.listLlmModels({}, { signal: controller.signal }));
      expect(err.code).toBe(Code.Canceled);
      await waitFor("the handler stopped", () => served().seen.stopped.length > before);
    });
  });
});

interface RawAnswer {
  status: number;
  headers: Record<string, string | undefined>;
  body: string;
}

/** One HTTP request, and the parts of its answer a Connect client reads. */
function raw(
  url: string,
  path: string,
  headers: Record<string, string>,
  body: Uint8Array,
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${url}${path}`, { method: "POST", headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const pick = (k: string) => res.headers[k] as string | undefined;
        resolve({
          status: res.statusCode ?? 0,
          headers: Object.fromEntries(
            [
              "content-type",
              "content-length",
              "content-encoding",
              "x-answer",
              "trailer-x-trailer",
              "x-why",
              "x-intercepted",
            ].map((k) => [k, pick(k)]),
          ),
          body: Buffer.concat(chunks).toString("base64"),
        });
      });
    });
    req.on("error", reject);
    req.end(body);
  });
}

const proto = { "content-type": "application/proto" };
const avatar = (avatarId: string) =>
  toBinary(GetAvatarRequestSchema, create(GetAvatarRequestSchema, { avatarId }));
const CATALOG = "/avatar.catalog.v1.CatalogService";

describe("the same HTTP answers from both servers", () => {
  it.each([
    [
      "an answer with headers and trailers",
      `${CATALOG}/ListLanguages`,
      { ...proto, "x-echo": "e" },
      new Uint8Array(),
    ],
    ["a domain error with its detail", `${CATALOG}/GetAvatar`, proto, avatar("missing")],
    ["an error with metadata", `${CATALOG}/GetAvatar`, proto, avatar("metadata")],
    ["an unexpected error", `${CATALOG}/GetAvatar`, proto, avatar("crash")],
    ["a message that is not protobuf", `${CATALOG}/GetAvatar`, proto, new Uint8Array([0xff, 0xff, 0xff])],
    [
      "a deadline that is no number",
      `${CATALOG}/GetAvatar`,
      { ...proto, "connect-timeout-ms": "soon" },
      avatar("a"),
    ],
    [
      "a deadline that passes in the handler",
      `${CATALOG}/ListLlmModels`,
      { ...proto, "connect-timeout-ms": "50" },
      new Uint8Array(),
    ],
    [
      "a deadline already past",
      `${CATALOG}/ListLlmModels`,
      { ...proto, "connect-timeout-ms": "0" },
      new Uint8Array(),
    ],
    ["a method the service does not implement", `${CATALOG}/ListVoices`, proto, new Uint8Array()],
    ["JSON", `${CATALOG}/GetAvatar`, { "content-type": "application/json" }, Buffer.from('{"avatarId":"j"}')],
    [
      "a gzipped request",
      `${CATALOG}/GetAvatar`,
      { ...proto, "content-encoding": "gzip" },
      gzipSync(avatar("g")),
    ],
    [
      "a caller that accepts gzip",
      `${CATALOG}/ListLanguages`,
      { ...proto, "accept-encoding": "gzip" },
      new Uint8Array(),
    ],
    ["an unknown content type", `${CATALOG}/GetAvatar`, { "content-type": "text/plain" }, avatar("a")],
    ["a path that is no RPC", "/nothing/here", proto, new Uint8Array()],
  ])("%s", async (_case, path, headers, body) => {
    const [ours, theirs] = await Promise.all([
      raw((servers.ours as Served).url, path, headers, body),
      raw((servers.connectNode as Served).url, path, headers, body),
    ]);
    expect(ours).toEqual(theirs);
  });

  it("stops a handler at the deadline with DeadlineExceeded while its caller still waits", async () => {
    for (const { url, seen } of Object.values(servers)) {
      await raw(url, `${CATALOG}/ListLlmModels`, { ...proto, "connect-timeout-ms": "30" }, new Uint8Array());
      expect(seen.stopped.at(-1)).toBe(Code.DeadlineExceeded);
    }
  });

  it("closes the connection of an answer Node cannot write, and serves the next call", async () => {
    const client = createClient(CatalogService, servicesTransport((servers.ours as Served).url));
    const err = await caught(client.getAvatar({ avatarId: "unwritable" }, { timeoutMs: 5_000 }));
    expect(err.code).toBe(Code.Aborted);
    expect((await client.getAvatar({ avatarId: "after" })).avatar?.id).toBe("after");
  });

  it("serves a plain binary call itself, and leaves the rest to connect-node", async () => {
    // connect-node aborts every call's signal when the call ends; this server only when it must.
    const { url, seen } = servers.ours as Served;
    await raw(url, `${CATALOG}/ListLanguages`, proto, new Uint8Array());
    expect(seen.lastSignal?.aborted).toBe(false);
    await raw(url, `${CATALOG}/ListLanguages`, { "content-type": "application/json" }, Buffer.from("{}"));
    expect(seen.lastSignal?.aborted).toBe(true);
    const other = servers.connectNode as Served;
    await raw(other.url, `${CATALOG}/ListLanguages`, proto, new Uint8Array());
    expect(other.seen.lastSignal?.aborted).toBe(true);
  });
});
