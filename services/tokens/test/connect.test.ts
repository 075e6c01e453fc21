import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createMemoryBus } from "@avatar/bus";
import { SessionMode } from "@avatar/contracts/common";
import { Tier, TokensService } from "@avatar/contracts/tokens";
import {
  connectInterceptors,
  createClients,
  createDb,
  createLogger,
  type Env,
  errorDetailOf,
  listen,
  REQUEST_ID_HEADER,
  type RunningService,
  sealerFromEnv,
  services,
  silentLogger,
  startService,
  verifySessionToken,
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
import { decodeProtectedHeader, type JWK } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TokensDatabase, tokensModule } from "../src/index.js";
import { tokensAdminService } from "../src/service.js";
import { SessionTokenSigner } from "../src/signing-keys.js";
import { cachedSpaces } from "../src/space-cache.js";
import {
  failure,
  fixedApiKey,
  newSigner,
  openTokensDb,
  sessionClaims,
  signWith,
  type TokensTestDb,
} from "./support.js";

describe("TokensService over an in-process Connect transport", () => {
  let t: TokensTestDb;
  let signer: SessionTokenSigner;
  let client: Client<typeof TokensService>;

  beforeAll(async () => {
    t = await openTokensDb();
    signer = newSigner(t.db);
    const log = createLogger({ sink: () => {} });
    const transport = createRouterTransport(
      (router) =>
        router.service(
          TokensService,
          tokensAdminService(t.db, signer, cachedSpaces(t.db, undefined), createMemoryBus()),
        ),
      { router: { interceptors: connectInterceptors(log, "tokens") } },
    );
    client = createClient(TokensService, transport);
  });
  afterAll(async () => {
    await t.close();
  });

  it("creates a space and authenticates its key", async () => {
    const created = await client.createSpace({ name: "Acme", tier: Tier.PRO });
    const auth = await client.authenticateApiKey({ apiKey: created.apiKeySecret });
    expect(auth.space).toMatchObject({ id: created.space?.id, tier: Tier.PRO, maxSessionDuration: 3600 });
  });

  it("delivers AlreadyExists, InvalidArgument with its field, NotFound and Unauthenticated", async () => {
    const key = fixedApiKey();
    await client.createSpace({ name: "First", apiKey: key });
    expect((await failure(client.createSpace({ name: "Again", apiKey: key }))).code).toBe(Code.AlreadyExists);

    const badTier = await failure(client.createSpace({ name: "x", tier: 42 as Tier }));
    expect(badTier.code).toBe(Code.InvalidArgument);
    expect(errorDetailOf(badTier)?.field).toBe("tier");

    const missing = await failure(client.getSpace({ spaceId: "5e1f0c2a-3333-4000-8000-000000000001" }));
    expect(missing.code).toBe(Code.NotFound);
    expect(errorDetailOf(missing)?.field).toBe("space_id");

    const wrong = await failure(client.authenticateApiKey({ apiKey: `${key}-wrong` }));
    expect(wrong.code).toBe(Code.Unauthenticated);
    expect(wrong.rawMessage).toBe("Not authenticated");
  });

  it("verifies a session token of its signer and refuses a forged one", async () => {
    const claims = sessionClaims();
    const token = await signWith(signer, claims);
    const res = await client.verifySessionToken({ sessionToken: token });
    expect(res.claims).toMatchObject({
      sessionId: claims.sub,
      spaceId: claims.space_id,
      mode: SessionMode.LITE,
    });

    const [header, payload] = token.split(".");
    const forged = await failure(client.verifySessionToken({ sessionToken: `${header}.${payload}.AAAA` }));
    expect(forged.code).toBe(Code.Unauthenticated);
  });
});

describe("the tokens service on a real server", () => {
  let database: TestDatabase;
  let running: RunningService | undefined;
  let url: string;
  let client: Client<typeof TokensService>;
  let dataDir: string;
  const encryptionKeys = `k1:${randomBytes(32).toString("base64")}`;
  const { log, records } = collectingLogger();

  async function start(env: Env) {
    const listening = await listen({ port: 0, host: "127.0.0.1" });
    const service = await startService(tokensModule, {
      databaseUrl: database.url,
      bus: createMemoryBus(),
      log,
      // Minting reaches other services; nothing here mints, so their URLs lead nowhere.
      clients: createClients(
        Object.fromEntries(Object.keys(services).map((name) => [name, "http://127.0.0.1:9"])),
        testIdentity("tokens"),
      ),
      env,
      listening,
      identity: testIdentity("tokens"),
      poolSize: 3,
    });
    return { service, url: listening.url };
  }

  beforeAll(async () => {
    database = await createTestDatabase();
    dataDir = mkdtempSync(path.join(tmpdir(), "tokens-data-"));
    const started = await start({ ENCRYPTION_KEYS: encryptionKeys, DATA_DIR: dataDir });
    running = started.service;
    url = started.url;
    client = allowedCallerClient(TokensService, url);
  });
  afterAll(async () => {
    await running?.stop();
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("is live and ready over plain HTTP", async () => {
    const health = await fetch(`${url}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: "ok" });
    expect((await fetch(`${url}/readyz`)).status).toBe(200);
  });

  it("starts with a signing key and publishes it", async () => {
    const { keys } = await client.getSigningKeys({});
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatchObject({ alg: "ES256", current: true });
    // ENCRYPTION_KEYS was given: no key file is generated.
    expect(existsSync(path.join(dataDir, "keys", "tokens.key"))).toBe(false);
  });

  it("serves spaces and API keys over the wire, with domain errors intact", async () => {
    const created = await client.createSpace({ name: "Acme", tier: Tier.SCALE });
    const auth = await client.authenticateApiKey({ apiKey: created.apiKeySecret });
    expect(auth.apiKey?.id).toBe(created.apiKey?.id);
    expect(auth.space?.maxSessionDuration).toBe(7200);

    const bad = await failure(client.createApiKey({ spaceId: created.space?.id, apiKey: "weak" }));
    expect(bad.code).toBe(Code.InvalidArgument);
    expect(errorDetailOf(bad)?.field).toBe("api_key");
  });

  it("publishes the keys it signs with, across a rotation, and verifies its tokens over the wire", async () => {
    // A signer on the service's database and encryption key signs as the service itself does.
    const db = createDb<TokensDatabase>({ url: database.url, schema: "tokens", poolSize: 1 });
    try {
      // refreshMs 0: it reads the current key before every token, so it signs with the rotated key at once.
      const signer = new SessionTokenSigner(
        db,
        sealerFromEnv("tokens", { ENCRYPTION_KEYS: encryptionKeys }, silentLogger),
        { refreshMs: 0 },
      );
      const before = await signWith(signer, sessionClaims());
      const rotated = await client.rotateSigningKey({});
      const after = await signWith(signer, sessionClaims());
      expect(decodeProtectedHeader(after).kid).toBe(rotated.key?.kid);

      const { keys } = await client.getSigningKeys({});
      expect(keys.map((k) => k.kid)).toEqual([rotated.key?.kid, decodeProtectedHeader(before).kid]);
      const jwks = {
        keys: keys.map((k) => ({ ...(JSON.parse(k.publicJwk) as JWK), kid: k.kid, alg: k.alg })),
      };
      expect(jwks.keys.every((k) => !("d" in k))).toBe(true);
      for (const token of [before, after]) {
        expect((await verifySessionToken(token, jwks, new Date())).sub).toBe(sessionClaims().sub);
        expect((await client.verifySessionToken({ sessionToken: token })).claims?.sessionId).toBe(
          sessionClaims().sub,
        );
      }
      const forged = await failure(client.verifySessionToken({ sessionToken: `${after.slice(0, -4)}AAAA` }));
      expect(forged.code).toBe(Code.Unauthenticated);
    } finally {
      await db.destroy();
    }
  });

  it("logs an unexpected failure with the caller's x-request-id and hides it from the caller", async () => {
    await withTableAway({ url: database.url, schema: "tokens" }, "spaces", async () => {
      const err = await failure(client.listSpaces({}, { headers: { [REQUEST_ID_HEADER]: "req-tokens-1" } }));
      expect(err.code).toBe(Code.Internal);
      expect(err.rawMessage).not.toContain("spaces");
    });
    expect(records().find((r) => r.request_id === "req-tokens-1")).toMatchObject({
      level: "error",
      service: "tokens",
      msg: "rpc failed unexpectedly",
    });
  });

  it("without ENCRYPTION_KEYS seals its signing key with a key file generated once in DATA_DIR", async () => {
    await running?.stop();
    running = undefined;
    const db = createDb<TokensDatabase>({ url: database.url, schema: "tokens", poolSize: 1 });
    try {
      await db.deleteFrom("signing_keys").execute();
      const generated = () =>
        records().filter((r) => String(r.msg).startsWith("generated a local encryption key"));
      const first = await start({ DATA_DIR: dataDir });
      expect(generated()).toHaveLength(1);
      await first.service.stop();
      running = (await start({ DATA_DIR: dataDir })).service;
      expect(generated()).toHaveLength(1);

      const row = await db
        .selectFrom("signing_keys")
        .selectAll()
        .where("current", "=", true)
        .executeTakeFirst();
      const fileSealer = sealerFromEnv("tokens", { DATA_DIR: dataDir }, silentLogger);
      expect(
        JSON.parse(fileSealer.open(row?.private_jwk_sealed ?? "", `signing_key:${row?.kid}`)),
      ).toHaveProperty("d");
    } finally {
      await db.destroy();
    }
  });
});
