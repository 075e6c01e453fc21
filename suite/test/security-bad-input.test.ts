import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, key, mint } from "./sessions-support.js";
import { atNextSecond, json, startTestSuite, type TestSuite } from "./support.js";

/**
 * Finding 6 of the security review: a NUL character in any string gave 500 from Postgres, and
 * page=2147483648 gave 500 on every list. Both are 422s in the contract's shape, on every route: the
 * table is the API's own description (GET /openapi.json), so a new route is covered when it is added.
 */

// biome-ignore lint/suspicious/noExplicitAny: an OpenAPI document read as JSON
type Json = any;

let suite: TestSuite;
let doc: Json;
let sessionToken: string;

beforeAll(async () => {
  suite = await startTestSuite();
  doc = await json(await suite.get("/openapi.json"));
  sessionToken = (await mint(suite)).session_token;
});
afterAll(async () => {
  await suite?.stop();
});

interface Operation {
  method: string;
  path: string;
  op: Json;
}

const operations = (): Operation[] =>
  Object.entries(doc.paths as Record<string, Record<string, Json>>).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => ({ method: method.toUpperCase(), path, op })),
  );

/** The credential an operation takes (a session token only where nothing else will do). */
function credentials(op: Json): Record<string, string> {
  const kinds = (op.security ?? []).flatMap((s: Json) => Object.keys(s));
  if (kinds.includes("ApiKey")) return key(suite.apiKey);
  if (kinds.includes("SessionToken")) return bearer(sessionToken);
  return {};
}

/** The component a `$ref` names, or the schema itself. */
const resolve = (schema: Json): Json =>
  schema?.$ref ? doc.components.schemas[String(schema.$ref).split("/").pop() as string] : schema;

/** Every property of a body schema that may be a string (through anyOf / oneOf too). */
function stringProperties(schema: Json): string[] {
  const s = resolve(schema);
  const variants = [s, ...(s?.oneOf ?? []), ...(s?.anyOf ?? [])].map(resolve);
  const names = new Set<string>();
  for (const v of variants) {
    for (const [name, prop] of Object.entries((v?.properties ?? {}) as Record<string, Json>)) {
      const kinds = [prop, ...(prop.anyOf ?? [])].map(resolve);
      if (kinds.some((k) => k?.type === "string" && !k.enum && !k.const)) names.add(name);
    }
  }
  return [...names];
}

async function send(
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<{ status: number; body: Json }> {
  for (;;) {
    const res = await suite.request(method, path, { headers, ...(body !== undefined ? { body } : {}) });
    if (res.status === 429) {
      await atNextSecond();
      continue;
    }
    return { status: res.status, body: await res.json().catch(() => null) };
  }
}

const NUL = "\u0000";

describe("a NUL character in any string of any route: 422 value_error at its loc", () => {
  it("covers every path parameter, query parameter and body of the API's description", async () => {
    const checked: string[] = [];
    for (const { method, path, op } of operations()) {
      const params: Json[] = op.parameters ?? [];
      const headers = credentials(op);
      const pathWith = (value: string) => path.replace(/\{[a-z_]+\}/g, value);
      const plain = pathWith("00000000-0000-4000-8000-000000000000");
      const bodyOk = op.requestBody?.content["application/json"] ? {} : undefined;

      for (const p of params.filter((x) => x.in === "path")) {
        const res = await send(
          method,
          path.replace(`{${p.name}}`, "a%00b").replace(/\{[a-z_]+\}/g, "x"),
          headers,
          bodyOk,
        );
        expect(res.status, `${method} ${path} path ${p.name}`).toBe(422);
        expect(res.body.detail[0]).toMatchObject({ type: "value_error", loc: ["path", p.name] });
        checked.push(`${method} ${path} path.${p.name}`);
      }
      for (const p of params.filter((x) => x.in === "query")) {
        const res = await send(method, `${plain}?${p.name}=a%00b`, headers, bodyOk);
        expect(res.status, `${method} ${path} query ${p.name}`).toBe(422);
        expect(res.body.detail).toEqual([
          expect.objectContaining({ type: "value_error", loc: ["query", p.name], input: `a${NUL}b` }),
        ]);
        checked.push(`${method} ${path} query.${p.name}`);
      }
      const json = op.requestBody?.content["application/json"];
      if (json) {
        const schema = json.schema;
        const fields = stringProperties(schema);
        const body = Object.fromEntries([...fields.map((f) => [f, `x${NUL}y`]), [`k${NUL}`, "v"]]);
        const res = await send(method, plain, headers, body);
        expect(res.status, `${method} ${path} body`).toBe(422);
        const locs = res.body.detail.map((d: Json) => d.loc.join("."));
        expect(
          res.body.detail.every((d: Json) => d.type === "value_error"),
          `${method} ${path}`,
        ).toBe(true);
        for (const f of fields) expect(locs, `${method} ${path} body.${f}`).toContain(`body.${f}`);
        expect(locs).toContain(`body.k${NUL}.[key]`);
        checked.push(`${method} ${path} body(${fields.join(",")})`);
      }
    }
    // The routes the review named are among them.
    for (const expected of [
      "POST /v1/contexts body(",
      "POST /v1/secrets body(",
      "PATCH /v1/avatars/{avatar_id} body(",
      "POST /v1/voice_agents body(",
      "POST /v1/llm-configurations body(",
      "POST /v1/sessions/token body(",
      "GET /v1/sessions query.avatar_id",
    ]) {
      expect(
        checked.some((c) => c.startsWith(expected)),
        expected,
      ).toBe(true);
    }
  });

  it("names the field for the values the review used", async () => {
    const cases: [string, string, unknown, (string | number)[]][] = [
      ["POST", "/v1/contexts", { name: `ctx${NUL}`, prompt: "p" }, ["body", "name"]],
      [
        "POST",
        "/v1/secrets",
        { secret_name: "n", secret_value: `v${NUL}`, secret_type: "VENDORA_API_KEY" },
        ["body", "secret_value"],
      ],
      ["POST", "/v1/voice_agents", { name: `a${NUL}`, agent_type: "managed_agent" }, ["body", "name"]],
      [
        "POST",
        "/v1/sessions/token",
        { avatar_id: "00000000-0000-4000-8000-000000000000", dynamic_variables: { who: `x${NUL}` } },
        ["body", "dynamic_variables", "who"],
      ],
    ];
    for (const [method, path, body, loc] of cases) {
      const res = await send(method, path, key(suite.apiKey), body);
      expect(res.status, path).toBe(422);
      expect(res.body.detail[0]).toMatchObject({
        type: "value_error",
        loc,
        msg: "Value error, text must not contain NUL characters (\\u0000)",
      });
    }
    // A secret's value is never echoed, not even in a 422 about it.
    const secret = await send("POST", "/v1/secrets", key(suite.apiKey), {
      secret_name: "n",
      secret_value: `v${NUL}`,
      secret_type: "VENDORA_API_KEY",
    });
    expect(JSON.stringify(secret.body)).not.toContain(`v${NUL}`);
  });

  it("is refused by the services themselves too (the database-level guard): 400, never an internal error", async () => {
    const err = await suite.clients.agents
      .createContext({ spaceId: suite.spaceId, name: `n${NUL}`, prompt: "p", links: [] })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 3, rawMessage: "text must not contain NUL characters (\\u0000)" });
  });
});

describe("a page number out of range: 422 on every paginated list", () => {
  it("page=2147483648 is less_than_equal, the largest page is an empty page", async () => {
    const lists = operations().filter(({ op }) => (op.parameters ?? []).some((p: Json) => p.name === "page"));
    for (const list of ["/v1/avatars", "/v1/avatars/public", "/v1/memory", "/v1/sessions", "/v1/voices"]) {
      expect(lists.map((l) => l.path)).toContain(list);
    }
    for (const { method, path: pattern, op } of lists) {
      const headers = credentials(op);
      const path = pattern.replace(/\{[a-z_]+\}/g, "00000000-0000-4000-8000-000000000000");
      const res = await send(method, `${path}?page=2147483648`, headers);
      expect(res.status, path).toBe(422);
      expect(res.body.detail).toEqual([
        {
          type: "less_than_equal",
          loc: ["query", "page"],
          msg: "Input should be less than or equal to 2147483647",
          input: "2147483648",
          ctx: { le: 2147483647 },
        },
      ]);
      for (const page of ["2147483647", "99999999999999999999999"]) {
        const last = await send(method, `${path}?page=${page}&page_size=100`, headers);
        if (page === "2147483647") {
          // A list under a resource this test does not have answers 404; never a 5xx.
          expect([200, 404], path).toContain(last.status);
          if (last.status === 200) expect(last.body.data.results).toEqual([]);
        } else {
          expect(last.status, path).toBe(422);
        }
      }
    }
  });

  it("a transcript timestamp beyond what an integer holds exactly: 422", async () => {
    const res = await send(
      "GET",
      "/v1/sessions/00000000-0000-4000-8000-000000000000/transcript?start_timestamp=100000000000000000000",
      key(suite.apiKey),
    );
    expect(res.status).toBe(422);
    expect(res.body.detail[0]).toMatchObject({ type: "less_than_equal", loc: ["query", "start_timestamp"] });
  });
});
