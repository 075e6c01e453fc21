import { randomBytes } from "node:crypto";
import type { AgentsDatabase } from "@avatar/agents";
import { createDb } from "@avatar/runtime";
import { collectingLogger } from "@avatar/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { atNextSecond, startTestSuite, type TestSuite } from "./support.js";

/**
 * Secrets over HTTP. Every log line of the whole suite (debug level) and every response body of this
 * file are kept, and the last test asserts that no secret value appears in any of them.
 */

let suite: TestSuite;
const { log, lines: logLines } = collectingLogger();
const responseBodies: string[] = [];
/** Every value this file ever sent; made unique so that a match can only be a leak. */
const values: string[] = [];

const secretValue = (region: string) => {
  const value = `sk-${region}-${randomBytes(18).toString("hex")}`;
  values.push(value);
  return value;
};

beforeAll(async () => {
  suite = await startTestSuite({
    log,
  });
});
afterAll(async () => {
  await suite?.stop();
});

/** One request with the demo key, its body text kept; a burst over the limit waits for the next window. */
async function call(method: string, path: string, body?: unknown) {
  for (;;) {
    const res = await suite.request(method, path, {
      headers: { "X-API-KEY": suite.apiKey },
      ...(body !== undefined ? { body } : {}),
    });
    const text = await res.text();
    responseBodies.push(text);
    if (res.status === 429) {
      await atNextSecond();
      continue;
    }
    return { status: res.status, body: text ? JSON.parse(text) : null };
  }
}

describe("storing and listing", () => {
  it("stores a key of every type and region and answers only {id, secret_name}", async () => {
    const types = [
      "VENDORA_API_KEY",
      "VENDORB_API_KEY",
      "VENDORC_API_KEY",
      "VENDORD_API_KEY",
      "VENDORE_API_KEY",
    ];
    const regions = ["us", "eu", "in", "jp", "au"];
    const stored: { id: string; value: string; type: string }[] = [];
    for (const [i, secret_type] of types.entries()) {
      const value = secretValue(regions[i] ?? "xx");
      const res = await call("POST", "/v1/secrets", {
        secret_name: `Key ${i}`,
        secret_value: value,
        secret_type,
      });
      expect(res.status).toBe(200);
      expect(Object.keys(res.body.data).sort()).toEqual(["id", "secret_name"]);
      expect(res.body.data.secret_name).toBe(`Key ${i}`);
      stored.push({ id: res.body.data.id, value, type: secret_type });
    }
    const list = await call("GET", "/v1/secrets");
    expect(list.body.data).toHaveLength(types.length);
    for (const item of list.body.data) {
      expect(Object.keys(item).sort()).toEqual([
        "allowed_hosts",
        "created_at",
        "id",
        "secret_name",
        "secret_type",
      ]);
    }
    expect(list.body.data.map((s: { secret_type: string }) => s.secret_type).sort()).toEqual(types);
    // The values are kept: the pipeline's internal call opens them.
    for (const s of stored) {
      const revealed = await suite.clients.agents.revealSecret({ spaceId: suite.spaceId, secretId: s.id });
      expect(revealed.secretValue).toBe(s.value);
    }
  });

  it("keeps only sealed values in the database", async () => {
    const db = createDb<AgentsDatabase>({ url: suite.databaseUrl, schema: "agents", poolSize: 1 });
    try {
      const rows = await db.selectFrom("secrets").selectAll().execute();
      expect(rows.length).toBeGreaterThan(0);
      const dump = JSON.stringify(rows);
      for (const value of values) expect(dump).not.toContain(value);
    } finally {
      await db.destroy();
    }
  });

  it("422 for an unknown secret type, a name over 255 characters and a huge value, with the value masked", async () => {
    const value = secretValue("bad");
    const res = await call("POST", "/v1/secrets", {
      secret_name: "n".repeat(256),
      secret_value: `${value}${"x".repeat(16_384)}`,
      secret_type: "VENDORZ_API_KEY",
    });
    expect(res.status).toBe(422);
    expect(res.body.detail.map((d: { type: string; loc: string[] }) => [d.type, d.loc.join(".")])).toEqual([
      ["string_too_long", "body.secret_name"],
      ["string_too_long", "body.secret_value"],
      ["enum", "body.secret_type"],
    ]);
    expect(res.body.detail[1].input).toBe("**********");
    expect(res.body.detail[2].ctx).toEqual({
      expected:
        "'VENDORA_API_KEY', 'VENDORB_API_KEY', 'VENDORC_API_KEY', 'VENDORD_API_KEY' or 'VENDORE_API_KEY'",
    });

    const missingName = await call("POST", "/v1/secrets", {
      secret_value: secretValue("m"),
      secret_type: "VENDORA_API_KEY",
    });
    expect(missingName.body.detail).toEqual([
      {
        type: "missing",
        loc: ["body", "secret_name"],
        msg: "Field required",
        input: { secret_value: "**********", secret_type: "VENDORA_API_KEY" },
      },
    ]);
    const blank = await call("POST", "/v1/secrets", {
      secret_name: "b",
      secret_value: "   ",
      secret_type: "VENDORA_API_KEY",
    });
    expect(blank).toMatchObject({ status: 400, body: { code: 4000, data: null } });
    const notJson = await call("POST", "/v1/secrets", `{"secret_value": "${secretValue("j")}",`);
    expect(notJson.status).toBe(422);
    expect(notJson.body.detail[0].type).toBe("json_invalid");
  });
});

describe("using and deleting", () => {
  it("uses a secret in an LLM configuration and a voice agent, then deletes it once", async () => {
    const value = secretValue("use");
    const created = await call("POST", "/v1/secrets", {
      secret_name: "For agents",
      secret_value: value,
      secret_type: "VENDORB_API_KEY",
      allowed_hosts: ["llm.example"],
    });
    const id = created.body.data.id;
    const llm = await call("POST", "/v1/llm-configurations", {
      display_name: "l",
      model_name: "m",
      secret_id: id,
      base_url: "https://llm.example/v1",
    });
    expect(llm.status).toBe(200);
    const agent = await call("POST", "/v1/voice_agents", {
      name: "b",
      agent_type: "vendorB_agent",
      agent_configuration: { secret_id: id },
    });
    expect(agent.status).toBe(200);
    expect(
      (await call("GET", `/v1/voice_agents/${agent.body.data.id}`)).body.data.agent_configuration.secret_id,
    ).toBe(id);

    expect(await call("DELETE", `/v1/secrets/${id}`)).toMatchObject({
      status: 200,
      body: { code: 100, data: null },
    });
    expect(await call("DELETE", `/v1/secrets/${id}`)).toMatchObject({
      status: 404,
      body: { code: 4040, data: null },
    });
    expect((await call("DELETE", "/v1/secrets/not-a-uuid")).status).toBe(422);
    const list = await call("GET", "/v1/secrets");
    expect(list.body.data.map((s: { id: string }) => s.id)).not.toContain(id);
  });
});

describe("no secret value anywhere", () => {
  it("appears in no log line of the run and no response body", () => {
    // The run did log (services started, migrated): the sink is wired, so the check below means something.
    expect(logLines.length).toBeGreaterThan(5);
    expect(responseBodies.length).toBeGreaterThan(15);
    const logs = logLines.join("\n");
    const bodies = responseBodies.join("\n");
    for (const value of values) {
      // The whole value, and its random part alone (a truncated or re-prefixed copy is a leak too).
      const tail = value.slice(-36);
      for (const needle of [value, tail]) {
        expect(logs.includes(needle), `log contains ${needle}`).toBe(false);
        expect(bodies.includes(needle), `response contains ${needle}`).toBe(false);
      }
    }
  });
});
