import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createMemoryBus } from "@avatar/bus";
import { CatalogService } from "@avatar/contracts/catalog";
import {
  type Clients,
  connectInterceptors,
  createClients,
  createLogger,
  errorDetailOf,
  type Listening,
  listen,
  REQUEST_ID_HEADER,
  type RunningService,
  startService,
} from "@avatar/runtime";
import {
  allowedCallerClient,
  collectingLogger,
  createTestDatabase,
  type TestDatabase,
  testIdentity,
  withTableAway,
} from "@avatar/testkit";
import { type Client, Code, createClient, createRouterTransport } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogModule } from "../src/index.js";
import { type CatalogFile, readCatalogFile } from "../src/seed.js";
import { catalogService } from "../src/service.js";
import {
  addAvatar,
  addVoice,
  type CatalogTestDb,
  failure,
  openCatalogDb,
  SPACE_A,
  SPACE_B,
} from "./support.js";

const file = readCatalogFile();

describe("CatalogService over an in-process Connect transport", () => {
  let t: CatalogTestDb;
  let client: Client<typeof CatalogService>;

  beforeAll(async () => {
    t = await openCatalogDb();
    const log = createLogger({ sink: () => {} });
    const transport = createRouterTransport(
      (router) => router.service(CatalogService, catalogService(t.db)),
      {
        router: { interceptors: connectInterceptors(log, "catalog") },
      },
    );
    client = createClient(CatalogService, transport);
  });
  afterAll(async () => {
    await t.close();
  });

  it("serves lists as messages", async () => {
    const avatar = await addAvatar(t.db, { space_id: SPACE_A, is_public: false, name: "Mine" });
    const res = await client.listAvatars({ spaceId: SPACE_A, page: { page: 1, pageSize: 5 } });
    expect(res.avatars.map((a) => a.id)).toEqual([avatar.id]);
    expect(res.page).toMatchObject({ count: 1, page: 1, pageSize: 5 });
  });

  it("delivers NotFound with the ErrorDetail naming the field", async () => {
    const theirs = await addAvatar(t.db, { space_id: SPACE_B, is_public: false });
    const err = await failure(client.getAvatar({ spaceId: SPACE_A, avatarId: theirs.id }));
    expect(err.code).toBe(Code.NotFound);
    expect(err.rawMessage).toBe("Avatar not found");
    expect(errorDetailOf(err)?.field).toBe("avatar_id");

    const bad = await failure(client.getVoice({ spaceId: SPACE_A, voiceId: "not-a-uuid" }));
    expect(bad.code).toBe(Code.NotFound);
    expect(errorDetailOf(bad)?.field).toBe("voice_id");
  });

  it("delivers InvalidArgument for a bad import, naming the item and the field", async () => {
    const err = await failure(
      client.importVoices({ voices: [{ name: "ok" }, { name: "bad", voiceEngines: ["nope"] }] }),
    );
    expect(err.code).toBe(Code.InvalidArgument);
    expect(err.rawMessage).toBe("voices[1]: unknown voice engines nope");
    expect(errorDetailOf(err)?.field).toBe("voice_engines");
  });

  it("delivers NotFound for an import naming an unknown default voice", async () => {
    const voice = await addVoice(t.db, { space_id: SPACE_B, is_public: false });
    const err = await failure(
      client.importAvatars({ avatars: [{ name: "A", spaceId: SPACE_A, defaultVoice: { id: voice.id } }] }),
    );
    expect(err.code).toBe(Code.NotFound);
    expect(errorDetailOf(err)?.field).toBe("default_voice_id");
  });
});

describe("the catalog service on a real server", () => {
  let database: TestDatabase;
  let listening: Listening & { setHandler(handler: import("node:http").RequestListener): void };
  let running: RunningService;
  let client: Client<typeof CatalogService>;
  const { log, records } = collectingLogger();
  const clients: Clients = createClients({}, testIdentity("catalog"));

  beforeAll(async () => {
    database = await createTestDatabase();
    listening = await listen({ port: 0, host: "127.0.0.1" });
    running = await startService(catalogModule, {
      databaseUrl: database.url,
      bus: createMemoryBus(),
      log,
      clients,
      env: {},
      listening,
      identity: testIdentity("catalog"),
      poolSize: 3,
    });
    client = allowedCallerClient(CatalogService, listening.url);
  });
  afterAll(async () => {
    await running?.stop();
    await database?.drop();
  });

  it("is live and ready over plain HTTP", async () => {
    const health = await fetch(`${listening.url}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: "ok" });
    expect((await fetch(`${listening.url}/readyz`)).status).toBe(200);
  });

  it("migrated its schema and seeded the catalog file at start", async () => {
    expect(records().find((r) => r.msg === "migrated")).toMatchObject({ service: "catalog" });
    const languages = await client.listLanguages({});
    expect(languages.languages.map((l) => l.code)).toEqual(file.languages.map((l) => l.code));
    const avatars = await client.listPublicAvatars({ page: { pageSize: 100 } });
    expect(avatars.page?.count).toBe(file.public_avatars.length);
    expect(avatars.avatars.some((a) => a.sandboxEnabled)).toBe(true);
    const voice = file.voices[0];
    const got = await client.getVoice({ spaceId: SPACE_A, voiceId: voice?.id ?? "" });
    expect(got.voice?.voiceEngines).toEqual(voice?.voice_engines);
  });

  it("delivers domain errors with their code and detail over the wire", async () => {
    const err = await failure(client.getAvatar({ spaceId: SPACE_A, avatarId: "nope" }));
    expect(err.code).toBe(Code.NotFound);
    expect(errorDetailOf(err)?.field).toBe("avatar_id");
  });

  it("logs an unexpected failure with the caller's x-request-id and hides it from the caller", async () => {
    // A table going missing under the running service: an error no handler expects.
    await withTableAway({ url: database.url, schema: "catalog" }, "languages", async () => {
      const err = await failure(
        client.listLanguages({}, { headers: { [REQUEST_ID_HEADER]: "req-catalog-1" } }),
      );
      expect(err.code).toBe(Code.Internal);
      expect(err.rawMessage).not.toContain("languages");
    });
    const entry = records().find((r) => r.request_id === "req-catalog-1");
    expect(entry).toMatchObject({ level: "error", service: "catalog", msg: "rpc failed unexpectedly" });
    expect(JSON.stringify(entry?.err)).toContain("languages");
  });

  it("seeds the file named by CATALOG_FILE", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "catalog-file-"));
    const custom: CatalogFile = { ...file, languages: [{ language: "Klingon", code: "tlh" }] };
    const customPath = path.join(dir, "catalog.json");
    writeFileSync(customPath, JSON.stringify(custom));
    const second = await listen({ port: 0, host: "127.0.0.1" });
    const other = await startService(catalogModule, {
      databaseUrl: database.url,
      bus: createMemoryBus(),
      log: createLogger({ sink: () => {} }),
      clients,
      env: { CATALOG_FILE: customPath },
      listening: second,
      identity: testIdentity("catalog"),
      poolSize: 2,
    });
    try {
      const res = await allowedCallerClient(CatalogService, second.url).listLanguages({});
      expect(res.languages.map((l) => l.code)).toEqual(["tlh"]);
    } finally {
      await other.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
