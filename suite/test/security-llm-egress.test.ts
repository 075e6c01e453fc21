import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EventClient } from "./realtime-client.js";
import { start, stopSession } from "./realtime-support.js";
import { grant, key, mint } from "./sessions-support.js";
import { json, startTestSuite, type TestSuite } from "./support.js";

/**
 * Finding 1 of the security review: an LLM configuration's base_url made a FULL session POST wherever it
 * pointed (internal services on loopback, their error texts coming back to the client). Now provider
 * egress to a customer's URL reaches only public addresses or what the operator allowed (EGRESS_ALLOW),
 * and a client is told a fixed sentence with a request id, never the upstream's words.
 */

/** A listener standing in for an internal service: counts requests, answers 500 with a revealing body. */
async function internalService() {
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    req.resume();
    res.writeHead(500, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: { message: "UPSTREAM-DETAIL signing key at 10.0.0.5:7001" } }));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const { port } = server.address() as AddressInfo;
  return { requests, url: `http://127.0.0.1:${port}`, close: () => new Promise((r) => server.close(r)) };
}

let suite: TestSuite;
let blocked: Awaited<ReturnType<typeof internalService>>;
let allowed: Awaited<ReturnType<typeof internalService>>;

beforeAll(async () => {
  blocked = await internalService();
  allowed = await internalService();
  // The operator allowed one self-hosted model's host and port; nothing else on loopback.
  suite = await startTestSuite({ env: { EGRESS_ALLOW: new URL(allowed.url).host } });
  await grant(suite, "100");
});
afterAll(async () => {
  await suite?.stop();
  await blocked?.close();
  await allowed?.close();
});

async function llmConfiguration(baseUrl: string): Promise<string> {
  const secret = await suite.request("POST", "/v1/secrets", {
    headers: key(suite.apiKey),
    body: {
      secret_name: "llm",
      secret_value: "sk-egress-test-0123456789",
      secret_type: "VENDORB_API_KEY",
      allowed_hosts: ["127.0.0.1"],
    },
  });
  const res = await suite.request("POST", "/v1/llm-configurations", {
    headers: key(suite.apiKey),
    body: { display_name: "m", model_name: "m", secret_id: (await json(secret)).data.id, base_url: baseUrl },
  });
  expect(res.status).toBe(200);
  return (await json(res)).data.id;
}

/** A FULL session on the configuration; the error event its first avatar.say gets. */
async function sayThrough(configurationId: string) {
  const minted = await mint(suite, { llm_configuration_id: configurationId });
  const { ws_url } = await start(suite, minted.session_token);
  const client = await EventClient.connect(ws_url);
  await client.next("session.state_updated", (e) => e.state === "connected");
  client.send({ type: "avatar.say", event_id: "q1", text: "hello" });
  const error = await client.next("error", (e) => e.source_event_id === "q1", 20_000);
  await stopSession(suite, minted.session_token);
  return error;
}

describe("a FULL session's language model on a customer's base_url", () => {
  it("never reaches a loopback address the operator did not allow, and says so without detail", async () => {
    const id = await llmConfiguration(`${blocked.url}/v1`);
    const error = await sayThrough(id);
    expect(blocked.requests).toEqual([]);
    expect(error.error.type).toBe("provider_rejected");
    expect(error.error.message).toMatch(/^language model failed: .* \(request id [0-9a-f-]{36}\)$/);
    expect(error.error.message).not.toContain("127.0.0.1");
  });

  it("reaches what the operator allowed, and never echoes the upstream's error body to the client", async () => {
    const id = await llmConfiguration(`${allowed.url}/v1`);
    const error = await sayThrough(id);
    expect(allowed.requests).toEqual(["POST /v1/chat/completions"]);
    expect(error.error.type).toBe("provider_unavailable");
    expect(error.error.message).not.toContain("UPSTREAM-DETAIL");
    expect(error.error.message).not.toContain("HTTP 500");
    expect(error.error.message).toMatch(/\(request id [0-9a-f-]{36}\)$/);
  });
});
