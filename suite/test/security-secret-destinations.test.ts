import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { key } from "./sessions-support.js";
import { json, startTestSuite, type TestSuite } from "./support.js";

/**
 * Finding 2 of the security review: any API key of a space could point an LLM configuration at its own
 * listener with a stored secret's id and receive the decrypted key. A secret now goes only to its provider
 * type's configured hosts, or to hosts the space bound to it when storing it (`allowed_hosts`).
 */

let suite: TestSuite;
let listener: http.Server;
let listenerUrl: string;
const received: string[] = [];

beforeAll(async () => {
  listener = http.createServer((req, res) => {
    received.push(req.headers.authorization ?? "");
    res.writeHead(200).end();
  });
  await new Promise<void>((r) => listener.listen(0, "127.0.0.1", () => r()));
  listenerUrl = `http://127.0.0.1:${(listener.address() as AddressInfo).port}/v1`;
  suite = await startTestSuite({
    // The attacker's listener counts as reachable here (as a public host would be), so only the
    // secret's binding stands between it and the key.
    env: { EGRESS_ALLOW: new URL(listenerUrl).host, PROVIDER_VENDORB_URL: "https://api.vendor-b.example/v1" },
  });
});
afterAll(async () => {
  await suite?.stop();
  await new Promise((r) => listener?.close(r));
});

const post = async (path: string, body: unknown) => {
  const res = await suite.request("POST", path, { headers: key(suite.apiKey), body });
  return { status: res.status, body: await json(res) };
};

async function storeKey(allowedHosts?: string[]): Promise<string> {
  const res = await post("/v1/secrets", {
    secret_name: "vendorB production",
    secret_value: "sk-prod-exfiltrate-me-0123456789",
    secret_type: "VENDORB_API_KEY",
    ...(allowedHosts ? { allowed_hosts: allowedHosts } : {}),
  });
  expect(res.status).toBe(200);
  return res.body.data.id;
}

describe("a stored secret and an LLM configuration's base_url", () => {
  it("refuses a configuration that would send the key to a host that is not its provider's (400 base_url)", async () => {
    const secretId = await storeKey();
    const res = await post("/v1/llm-configurations", {
      display_name: "mine",
      model_name: "m",
      secret_id: secretId,
      base_url: listenerUrl,
    });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 4000, data: null });
    expect(res.body.message).toContain("allowed_hosts");
    expect(received).toEqual([]);
  });

  it("accepts the provider's own host, and a host the space bound to the secret", async () => {
    const unbound = await storeKey();
    const atProvider = await post("/v1/llm-configurations", {
      display_name: "vendorB",
      model_name: "m",
      secret_id: unbound,
      base_url: "https://api.vendor-b.example/v1",
    });
    expect(atProvider.status).toBe(200);
    const bound = await storeKey(["127.0.0.1"]);
    const selfHosted = await post("/v1/llm-configurations", {
      display_name: "self-hosted",
      model_name: "m",
      secret_id: bound,
      base_url: listenerUrl,
    });
    expect(selfHosted.status).toBe(200);
    const listed = await suite.get("/v1/secrets", key(suite.apiKey));
    const item = (await json(listed)).data.find((s: { id: string }) => s.id === bound);
    expect(item.allowed_hosts).toEqual(["127.0.0.1"]);
  });

  it("422 for allowed_hosts that are not host names", async () => {
    const res = await post("/v1/secrets", {
      secret_name: "k",
      secret_value: "sk-0123456789",
      secret_type: "VENDORB_API_KEY",
      allowed_hosts: ["https://evil.example/v1"],
    });
    expect(res.status).toBe(422);
    expect(res.body.detail[0]).toMatchObject({ type: "value_error", loc: ["body", "allowed_hosts", 0] });
  });
});
