import { readCatalogFile } from "@avatar/catalog";
import { collectingLogger, withTableAway } from "@avatar/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { json, startTestSuite, type TestSuite } from "./support.js";

/** The catalog slice through the public gateway, over real HTTP, on the whole suite. */

let suite: TestSuite;
const catalog = readCatalogFile();
const key = () => ({ "X-API-KEY": suite.apiKey });

beforeAll(async () => {
  suite = await startTestSuite();
});
afterAll(async () => {
  await suite?.stop();
});

describe("public reference data (no credential)", () => {
  it("lists the languages of the catalog file in the envelope", async () => {
    const res = await suite.get("/v1/languages");
    expect(res.status).toBe(200);
    const body = await json(res);
    expect(body.code).toBe(100);
    expect(body.data).toEqual(catalog.languages);
  });

  it("lists the managed models per provider", async () => {
    const body = await json(await suite.get("/v1/llm-models"));
    expect(body).toMatchObject({
      code: 100,
      data: { vendorB: ["gpt-4o", "gpt-4o-mini", "gpt-5-nano", "gpt-5.4-nano"] },
    });
  });

  it("lists public avatars paginated, including a sandbox-enabled and a 1080p one", async () => {
    const body = await json(await suite.get("/v1/avatars/public?page_size=100"));
    expect(body.data.count).toBe(catalog.public_avatars.length);
    expect(body.data.next).toBeNull();
    expect(body.data.previous).toBeNull();
    const results = body.data.results as {
      id: string;
      sandbox_enabled: boolean;
      is_1080p: boolean;
      status: string;
    }[];
    expect(results.map((a) => a.id).sort()).toEqual(catalog.public_avatars.map((a) => a.id).sort());
    expect(results.some((a) => a.sandbox_enabled)).toBe(true);
    expect(results.some((a) => a.is_1080p)).toBe(true);
    expect(results.every((a) => a.status === "ACTIVE")).toBe(true);
  });

  it("links pages with absolute next/previous URLs that keep the other query parameters", async () => {
    const first = (await json(await suite.get("/v1/avatars/public?page_size=2"))).data;
    expect(first.results).toHaveLength(2);
    const next = new URL(first.next);
    expect(next.origin).toBe(suite.gatewayUrl.replace("127.0.0.1", "127.0.0.1"));
    expect(next.searchParams.get("page")).toBe("2");
    expect(next.searchParams.get("page_size")).toBe("2");
    const second = (await json(await fetch(first.next))).data;
    expect(second.previous).not.toBeNull();
    expect(new URL(second.previous).searchParams.get("page")).toBe("1");
    const ids = new Set([...first.results, ...second.results].map((a: { id: string }) => a.id));
    expect(ids.size).toBe(4);
  });

  it("answers the OpenAPI document with the interface version", async () => {
    const doc = await json(await suite.get("/openapi.json"));
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.info.version).toBe("0.1.0");
    expect(doc.paths["/v1/avatars/{avatar_id}"].get.parameters[0]).toMatchObject({
      name: "avatar_id",
      in: "path",
    });
  });
});

describe("avatar previews (no credential: an <img> sends none)", () => {
  const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47]);

  it("points every avatar's preview_url at its rendered picture, a PNG in either orientation", async () => {
    const body = await json(await suite.get("/v1/avatars", { "X-API-KEY": suite.apiKey }));
    const avatar = body.data.results[0];
    expect(avatar.preview_url).toBe(`${suite.gatewayUrl}/v1/avatars/${avatar.id}/preview.png`);
    for (const [query, width, height] of [
      ["", 1280, 720],
      ["?orientation=vertical", 720, 1280],
    ] as const) {
      const res = await fetch(`${avatar.preview_url}${query}`);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("image/png");
      expect(res.headers.get("etag")).toMatch(/^".+"$/);
      const bytes = Buffer.from(await res.arrayBuffer());
      expect(bytes.subarray(0, 4)).toEqual(PNG);
      // IHDR: width and height, big-endian, at bytes 16 and 20.
      expect([bytes.readUInt32BE(16), bytes.readUInt32BE(20)]).toEqual([width, height]);
    }
  });

  it("answers 404 for an unknown avatar and 422 for a bad orientation", async () => {
    const unknown = await suite.get(`/v1/avatars/${crypto.randomUUID()}/preview.png`);
    expect(unknown.status).toBe(404);
    expect((await json(unknown)).code).toBe(4040);
    const bad = await suite.get(`/v1/avatars/${crypto.randomUUID()}/preview.png?orientation=diagonal`);
    expect(bad.status).toBe(422);
  });
});

describe("API-key reads", () => {
  it("lists the space's own avatars with the demo key", async () => {
    const body = await json(await suite.get("/v1/avatars", key()));
    expect(body.code).toBe(100);
    expect(body.data.count).toBe(catalog.demo_space_avatars.length);
    for (const a of body.data.results) {
      expect(a).toMatchObject({ space_id: suite.spaceId, type: "VIDEO", is_expired: false });
      expect(Object.keys(a)).toEqual(
        expect.arrayContaining([
          "id",
          "name",
          "created_at",
          "updated_at",
          "status",
          "preview_url",
          "default_voice",
          "is_1080p",
        ]),
      );
      expect(a.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    }
  });

  it("gets an avatar by id, with its default voice named", async () => {
    const demo = catalog.demo_space_avatars[0];
    const body = await json(await suite.get(`/v1/avatars/${demo?.id}`, key()));
    expect(body.data.id).toBe(demo?.id);
    expect(body.data.default_voice).toEqual({ id: demo?.default_voice_id, name: expect.any(String) });
  });

  it("reads a public avatar by id too", async () => {
    const pub = catalog.public_avatars[0];
    const res = await suite.get(`/v1/avatars/${pub?.id}`, key());
    expect(res.status).toBe(200);
  });

  it("lists voices and filters by voice_type", async () => {
    const all = (await json(await suite.get("/v1/voices?page_size=100", key()))).data;
    expect(all.count).toBe(catalog.voices.length);
    const pub = (await json(await suite.get("/v1/voices?voice_type=public", key()))).data;
    expect(pub.count).toBe(catalog.voices.length);
    const priv = (await json(await suite.get("/v1/voices?voice_type=private", key()))).data;
    expect(priv).toEqual({ count: 0, next: null, previous: null, results: [] });
  });

  it("gets a voice with its voice engines", async () => {
    const voice = catalog.voices[0];
    const body = await json(await suite.get(`/v1/voices/${voice?.id}`, key()));
    expect(body.data).toMatchObject({
      id: voice?.id,
      name: voice?.name,
      voice_engines: voice?.voice_engines,
    });
  });
});

describe("errors in the contract's shapes", () => {
  it("401 without a key and with an unknown key", async () => {
    for (const headers of [undefined, { "X-API-KEY": "lak_not_a_real_key_000000000000000000" }]) {
      const res = await suite.get("/v1/avatars", headers);
      expect(res.status).toBe(401);
      expect(await json(res)).toEqual({ code: 4010, data: null, message: "Not authenticated" });
    }
  });

  it("404 for an unknown avatar, voice or path", async () => {
    const missing = "00000000-0000-4000-8000-000000000000";
    for (const p of [`/v1/avatars/${missing}`, `/v1/voices/${missing}`, "/v1/nothing-here"]) {
      const res = await suite.get(p, key());
      expect(res.status).toBe(404);
      expect(await json(res)).toMatchObject({ code: 4040, data: null });
    }
  });

  it("405 with Allow for a wrong method", async () => {
    const res = await suite.request("DELETE", "/v1/languages");
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("GET");
    expect((await json(res)).code).toBe(4050);
  });

  it("422 in the interface's shape for a path id that is not a UUID", async () => {
    const res = await suite.get("/v1/avatars/not-a-uuid", key());
    expect(res.status).toBe(422);
    expect(await json(res)).toEqual({
      detail: [
        {
          type: "uuid_parsing",
          loc: ["path", "avatar_id"],
          msg: expect.stringMatching(/^Input should be a valid UUID, /),
          input: "not-a-uuid",
          ctx: { error: expect.any(String) },
        },
      ],
    });
  });

  it("422 lists every bad query parameter at once", async () => {
    const res = await suite.get("/v1/voices?page=0&page_size=101&voice_type=secret", key());
    expect(res.status).toBe(422);
    const { detail } = await json(res);
    expect(detail.map((d: { loc: unknown[]; type: string }) => [d.loc, d.type])).toEqual([
      [["query", "voice_type"], "enum"],
      [["query", "page"], "greater_than_equal"],
      [["query", "page_size"], "less_than_equal"],
    ]);
  });

  it("accepts page sizes at the bounds", async () => {
    for (const size of [1, 100]) {
      expect((await suite.get(`/v1/avatars/public?page_size=${size}`)).status).toBe(200);
    }
  });
});

describe("request ids", () => {
  it("echoes a caller's X-Request-Id and generates one otherwise", async () => {
    const echoed = await suite.get("/v1/languages", { "X-Request-Id": "trace-abc-123" });
    expect(echoed.headers.get("x-request-id")).toBe("trace-abc-123");
    const generated = await suite.get("/v1/languages");
    expect(generated.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    const failed = await suite.get("/v1/avatars");
    expect(failed.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("names the caller's request in the log line of a service that failed serving it", async () => {
    const { log, records } = collectingLogger();
    const own = await startTestSuite({ log });
    try {
      await withTableAway({ url: own.databaseUrl, schema: "catalog" }, "languages", async () => {
        const res = await own.get("/v1/languages", { "X-Request-Id": "req-languages-1" });
        expect(res.status).toBe(500);
      });
      expect(records().find((r) => r.msg === "rpc failed unexpectedly")).toMatchObject({
        request_id: "req-languages-1",
        procedure: "/avatar.catalog.v1.CatalogService/ListLanguages",
      });
    } finally {
      await own.stop();
    }
  });
});
