import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  appendPath,
  checkEgressTarget,
  createEgressFetch,
  EgressError,
  egressPolicy,
  egressUrlProblem,
  isPublicIp,
  parseIp,
  type Resolve,
  readEgressPolicy,
} from "../src/egress/index.js";

describe("isPublicIp", () => {
  const notPublic = [
    "127.0.0.1",
    "127.255.0.9",
    "0.0.0.0",
    "10.1.2.3",
    "172.16.0.1",
    "172.31.255.255",
    "192.168.1.1",
    "169.254.169.254",
    "100.64.0.1",
    "100.100.100.200",
    "192.0.2.5",
    "198.18.0.1",
    "224.0.0.1",
    "239.255.255.250",
    "255.255.255.255",
    "::",
    "::1",
    "[::1]",
    "::ffff:127.0.0.1",
    "::ffff:7f00:1",
    "::ffff:169.254.169.254",
    "::ffff:10.0.0.1",
    "64:ff9b::a00:1",
    "::127.0.0.1",
    "fe80::1",
    "fe80::1%eth0",
    "fd00:ec2::254",
    "fc00::1",
    "fec0::1",
    "ff02::1",
    "2001:db8::1",
    "2002:7f00:1::1",
    "2001::1",
  ];
  const publicOnes = [
    "8.8.8.8",
    "1.1.1.1",
    "172.32.0.1",
    "100.128.0.1",
    "2606:4700:4700::1111",
    "::ffff:8.8.8.8",
    "64:ff9b::808:808",
  ];
  it.each(notPublic)("%s is not public", (text) => {
    const ip = parseIp(text);
    expect(ip).toBeDefined();
    expect(isPublicIp(ip as NonNullable<typeof ip>)).toBe(false);
  });
  it.each(publicOnes)("%s is public", (text) => {
    expect(isPublicIp(parseIp(text) as NonNullable<ReturnType<typeof parseIp>>)).toBe(true);
  });
  it("reads IPv6 with an embedded IPv4 tail as the same bytes as its hex form", () => {
    expect(parseIp("::ffff:127.0.0.1")?.bytes).toEqual(parseIp("::ffff:7f00:1")?.bytes);
  });
  it("is not an address: names and junk", () => {
    for (const t of ["localhost", "example.com", "1.2.3", "::g", ""]) expect(parseIp(t)).toBeUndefined();
  });
});

describe("egressUrlProblem", () => {
  it.each([
    ["http://user:pw@example.com/v1", "must not contain a user name or password"],
    ["http://user@example.com/v1", "must not contain a user name or password"],
    ["https://example.com/v1#", "must not contain a fragment (#)"],
    ["https://example.com/v1#x", "must not contain a fragment (#)"],
    ["ftp://example.com/", "must be an http or https URL"],
    ["file:///etc/passwd", "must be an http or https URL"],
    ["example.com/v1", "must be an absolute http or https URL"],
  ])("%s: %s", (url, problem) => {
    expect(egressUrlProblem(url)).toBe(problem);
  });
  it("accepts plain http(s) URLs with a path and a query", () => {
    expect(egressUrlProblem("https://api.example.com/openai/v1?api-version=2")).toBeUndefined();
  });
});

describe("appendPath", () => {
  it("appends to the path and keeps the query out of the way", () => {
    expect(appendPath("https://h/v1?x=1", "chat/completions").href).toBe("https://h/v1/chat/completions?x=1");
    expect(appendPath("https://h/v1/", "/chat/completions").href).toBe("https://h/v1/chat/completions");
  });
});

describe("egressPolicy", () => {
  it("refuses an entry it cannot read, naming it", () => {
    expect(() => egressPolicy({ allow: ["http://"] })).toThrow(/EGRESS_ALLOW/);
    expect(() => egressPolicy({ allow: ["bad host!"] })).toThrow(/bad host!/);
  });
  it("reads EGRESS_ALLOW and trusts LOCAL_LLM_URL and PROVIDER_*_URL by origin", () => {
    const policy = readEgressPolicy({
      EGRESS_ALLOW: "llm.internal:8000, *.models.internal 10.20.0.0/16",
      LOCAL_LLM_URL: "http://127.0.0.1:8080/v1",
      PROVIDER_VENDORB_REALTIME_URL: "wss://rt.vendor-b.example/v1/realtime",
      OTHER_URL: "http://127.0.0.1:9999",
    });
    expect([...policy.origins].sort()).toEqual(["http://127.0.0.1:8080", "https://rt.vendor-b.example:443"]);
    expect(policy.hosts).toEqual([{ host: "llm.internal", port: "8000" }]);
    expect(policy.domains).toEqual([".models.internal"]);
    expect(policy.ranges).toHaveLength(1);
  });
});

/** A fake DNS: names to the addresses it answers. */
function dnsOf(table: Record<string, string[]>): Resolve & { asked: string[] } {
  const asked: string[] = [];
  const resolve = async (host: string) => {
    asked.push(host);
    return (table[host] ?? []).map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  };
  return Object.assign(resolve, { asked });
}

describe("checkEgressTarget", () => {
  it("refuses a name that resolves to loopback, and one that resolves to public and private at once", async () => {
    const resolve = dnsOf({ "evil.test": ["127.0.0.1"], "mixed.test": ["8.8.8.8", "10.0.0.1"] });
    const policy = egressPolicy();
    await expect(checkEgressTarget("http://evil.test/v1", policy, resolve)).rejects.toMatchObject({
      reason: "address_not_allowed",
    });
    await expect(checkEgressTarget("http://mixed.test/v1", policy, resolve)).rejects.toMatchObject({
      reason: "address_not_allowed",
    });
  });
  it("accepts a public name and reports what it resolved to", async () => {
    const resolve = dnsOf({ "api.test": ["8.8.8.8"] });
    expect(await checkEgressTarget("https://api.test/v1", egressPolicy(), resolve)).toEqual([
      { address: "8.8.8.8", family: 4 },
    ]);
  });
  it("refuses an unresolvable name without the resolver's words", async () => {
    await expect(checkEgressTarget("https://nowhere.test/", egressPolicy(), dnsOf({}))).rejects.toMatchObject(
      {
        reason: "unresolvable",
        message: "nowhere.test could not be resolved",
      },
    );
  });
});

describe("createEgressFetch", () => {
  let server: http.Server;
  let port: number;
  const hits: string[] = [];

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      hits.push(`${req.method} ${req.url} ${req.headers.host}`);
      if (req.url === "/redirect") {
        res.writeHead(302, { location: `http://127.0.0.1:${port}/target` }).end();
        return;
      }
      if (req.url === "/stream") {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write("data: one\n\n");
        setTimeout(() => res.end("data: two\n\n"), 20);
        return;
      }
      let body = "";
      req.on("data", (c) => {
        body += c;
      });
      req.on("end", () => {
        res.writeHead(200, { "content-type": "application/json", "set-cookie": ["a=1", "b=2"] });
        res.end(JSON.stringify({ method: req.method, body }));
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it("refuses loopback, private and metadata literals without connecting", async () => {
    const fetcher = createEgressFetch(egressPolicy());
    const before = hits.length;
    for (const url of [
      `http://127.0.0.1:${port}/`,
      `http://[::ffff:127.0.0.1]:${port}/`,
      `http://[::1]:${port}/`,
      "http://169.254.169.254/latest/meta-data/",
      "http://0.0.0.0/",
    ]) {
      await expect(fetcher(url)).rejects.toBeInstanceOf(EgressError);
    }
    expect(hits.length).toBe(before);
  });

  it("refuses a name whose DNS answer is loopback, and connects to nothing", async () => {
    const resolve = dnsOf({ "rebind.test": ["127.0.0.1"] });
    const before = hits.length;
    await expect(
      createEgressFetch(egressPolicy(), { resolve })(`http://rebind.test:${port}/`),
    ).rejects.toMatchObject({ reason: "address_not_allowed" });
    expect(hits.length).toBe(before);
  });

  it("connects to the address it checked (the lookup the socket uses is the checked one)", async () => {
    // The name resolves to 127.0.0.1, allowed here by range; the request must arrive at this server.
    const resolve = dnsOf({ "allowed.test": ["127.0.0.1"] });
    const fetcher = createEgressFetch(egressPolicy({ allow: ["127.0.0.1/32"] }), { resolve });
    const res = await fetcher(`http://allowed.test:${port}/echo`, { method: "POST", body: "hello" });
    expect(await res.json()).toEqual({ method: "POST", body: "hello" });
    expect(resolve.asked).toContain("allowed.test");
    expect(hits.at(-1)).toBe(`POST /echo allowed.test:${port}`);
    expect(res.headers.get("set-cookie")).toBe("a=1, b=2");
  });

  it("lets the operator allow one host and port, and nothing else on that host", async () => {
    const fetcher = createEgressFetch(egressPolicy({ allow: [`127.0.0.1:${port}`] }));
    expect((await fetcher(`http://127.0.0.1:${port}/ok`)).status).toBe(200);
    await expect(fetcher(`http://127.0.0.1:${port + 1}/`)).rejects.toBeInstanceOf(EgressError);
  });

  it("trusts the operator's own endpoints by origin (LOCAL_LLM_URL)", async () => {
    const fetcher = createEgressFetch(readEgressPolicy({ LOCAL_LLM_URL: `http://127.0.0.1:${port}/v1` }));
    expect((await fetcher(`http://127.0.0.1:${port}/v1/chat`)).status).toBe(200);
    await expect(fetcher(`https://127.0.0.1:${port}/v1/chat`)).rejects.toBeInstanceOf(EgressError);
  });

  it("does not follow redirects", async () => {
    const fetcher = createEgressFetch(egressPolicy({ allow: [`127.0.0.1:${port}`] }));
    const before = hits.length;
    const res = await fetcher(`http://127.0.0.1:${port}/redirect`);
    expect(res.status).toBe(302);
    expect(hits.slice(before)).toEqual([`GET /redirect 127.0.0.1:${port}`]);
  });

  it("refuses URLs with user info or a fragment before anything else", async () => {
    const fetcher = createEgressFetch(egressPolicy({ allow: [`127.0.0.1:${port}`] }));
    await expect(fetcher(`http://a:b@127.0.0.1:${port}/`)).rejects.toMatchObject({ reason: "invalid_url" });
    await expect(fetcher(`http://127.0.0.1:${port}/#x`)).rejects.toMatchObject({ reason: "invalid_url" });
  });

  it("streams the body and stops when the signal aborts", async () => {
    const fetcher = createEgressFetch(egressPolicy({ allow: [`127.0.0.1:${port}`] }));
    const res = await fetcher(`http://127.0.0.1:${port}/stream`);
    expect(await res.text()).toBe("data: one\n\ndata: two\n\n");
    const controller = new AbortController();
    const streaming = await fetcher(`http://127.0.0.1:${port}/stream`, { signal: controller.signal });
    const reader = (streaming.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    controller.abort();
    await expect(reader.read()).rejects.toBeDefined();
  });
});
