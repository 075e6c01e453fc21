/**
 * MintSessionToken through the built tokens service: in-process over createRouterTransport, and on a real
 * server (port 0) started the way the suite starts services. The rules themselves are covered at the
 * direct-call level (mint-rules.test.ts); here the wiring, the error details on the wire and the token
 * verification with the published keys.
 */
import { randomBytes } from "node:crypto";
import { SessionMode } from "@avatar/contracts/common";
import { Tier, TokensService } from "@avatar/contracts/tokens";
import {
  type Clients,
  connectBus,
  createLogger,
  errorDetailOf,
  issueToJson,
  listen,
  MAX_BATCH_ITEMS,
  type RunningService,
  silentLogger,
  startService,
  verifySessionToken,
} from "@avatar/runtime";
import {
  allowedCallerClient,
  createTestDatabase,
  openServiceDb,
  type ServiceTestDb,
  type TestDatabase,
  testIdentity,
} from "@avatar/testkit";
import { type Client, Code, ConnectError, createClient, createRouterTransport } from "@connectrpc/connect";
import type { JWK } from "jose";
import type { Kysely } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tokensModule } from "../src/index.js";
import { migrations } from "../src/migrations/index.js";
import type { TokensDatabase } from "../src/schema.js";
import { doubleClients, World } from "./mint-doubles.js";

const env = { ENCRYPTION_KEYS: `k1:${randomBytes(32).toString("base64")}` };

/** The clients a tokens service gets, its callees being the test doubles. */
const clientsFor = (world: World) => doubleClients(world) as unknown as Clients;

async function failure(p: Promise<unknown>): Promise<ConnectError> {
  const outcome = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(outcome instanceof ConnectError)) throw new Error(`expected a ConnectError, got ${String(outcome)}`);
  return outcome;
}

/** The same checks at each level: a token that verifies, a 404 with its field, a 422 with its entry. */
function behavesAsMint(level: () => { tokens: Client<typeof TokensService>; world: World }) {
  let spaceId: string;
  let avatarId: string;

  beforeAll(async () => {
    const { tokens, world } = level();
    const created = await tokens.createSpace({ name: "s", tier: Tier.STARTER });
    spaceId = created.space?.id ?? "";
    const voice = world.voice();
    avatarId = world.avatar({ spaceId, defaultVoice: { id: voice.id } }).id;
  });

  it("mints a token that verifies with the published signing keys", async () => {
    const { tokens, world } = level();
    const res = await tokens.mintSessionToken({
      spaceId,
      apiKeyId: "a0000000-0000-4000-8000-000000000000",
      request: { mode: SessionMode.FULL, avatarId },
    });
    const { keys } = await tokens.getSigningKeys({});
    const jwks = { keys: keys.map((k) => ({ ...(JSON.parse(k.publicJwk) as JWK), kid: k.kid, alg: k.alg })) };
    const claims = await verifySessionToken(res.sessionToken, jwks, new Date());
    expect(claims.sub).toBe(res.sessionId);
    expect(world.sessions.map((s) => s.session.id)).toContain(res.sessionId);
    const verified = await tokens.verifySessionToken({ sessionToken: res.sessionToken });
    expect(verified.claims?.sessionId).toBe(res.sessionId);
  });

  it("a 404 keeps its field on the wire", async () => {
    const { tokens } = level();
    const err = await failure(
      tokens.mintSessionToken({
        spaceId,
        request: { mode: SessionMode.FULL, avatarId: "b0000000-0000-4000-8000-000000000000" },
      }),
    );
    expect(err.code).toBe(Code.NotFound);
    expect(errorDetailOf(err)?.field).toBe("avatar_id");
  });

  it("the duration 422 keeps its entry on the wire (starter tier: 1800 s)", async () => {
    const { tokens } = level();
    const err = await failure(
      tokens.mintSessionToken({
        spaceId,
        request: { mode: SessionMode.FULL, avatarId, maxSessionDuration: 1801 },
      }),
    );
    expect(err.code).toBe(Code.InvalidArgument);
    expect(errorDetailOf(err)?.issues.map(issueToJson)).toEqual([
      {
        loc: ["body", "max_session_duration"],
        msg: "Input should be less than or equal to 1800",
        type: "less_than_equal",
        input: 1801,
        ctx: { le: 1800 },
      },
    ]);
  });

  it("a batch mints each on its own: a token, a 404 and a 422, each with its detail on the wire", async () => {
    const { tokens, world } = level();
    const apiKeyId = "a0000000-0000-4000-8000-000000000000";
    const res = await tokens.mintSessionTokensBatch({
      mints: [
        { spaceId, apiKeyId, request: { mode: SessionMode.LITE, avatarId } },
        { spaceId, request: { mode: SessionMode.FULL, avatarId: "b0000000-0000-4000-8000-000000000000" } },
        { spaceId, request: { mode: SessionMode.FULL, avatarId, maxSessionDuration: 1801 } },
      ],
      requestIds: ["req-1", "req-2"],
    });
    const [minted, missing, tooLong] = res.outcomes;
    expect(minted?.error).toBeUndefined();
    expect(world.sessions.map((s) => s.session.id)).toContain(minted?.minted?.sessionId);
    const { keys } = await tokens.getSigningKeys({});
    const jwks = { keys: keys.map((k) => ({ ...(JSON.parse(k.publicJwk) as JWK), kid: k.kid, alg: k.alg })) };
    const claims = await verifySessionToken(minted?.minted?.sessionToken ?? "", jwks, new Date());
    expect([claims.sub, claims.api_key_id]).toEqual([minted?.minted?.sessionId, apiKeyId]);
    expect(missing?.minted).toBeUndefined();
    expect([missing?.error?.code, missing?.error?.detail?.field]).toEqual([Code.NotFound, "avatar_id"]);
    expect(tooLong?.error?.code).toBe(Code.InvalidArgument);
    expect(tooLong?.error?.detail?.issues.map(issueToJson)[0]?.loc).toEqual(["body", "max_session_duration"]);
  });

  it("a batch of more mints than it takes is refused whole", async () => {
    const { tokens, world } = level();
    const before = world.sessions.length;
    const mint = { spaceId, request: { mode: SessionMode.LITE, avatarId } };
    const err = await failure(
      tokens.mintSessionTokensBatch({ mints: Array.from({ length: MAX_BATCH_ITEMS + 1 }, () => mint) }),
    );
    expect([err.code, errorDetailOf(err)?.field]).toEqual([Code.InvalidArgument, "mints"]);
    expect(world.sessions.length).toBe(before);
  });
}

describe("over createRouterTransport", () => {
  let testDb: ServiceTestDb<TokensDatabase>;
  let db: Kysely<TokensDatabase>;
  const world = new World();
  let tokens: Client<typeof TokensService>;

  beforeAll(async () => {
    testDb = await openServiceDb<TokensDatabase>("tokens", migrations, 3);
    db = testDb.db;
    const bus = await connectBus({}, "test", silentLogger);
    const app = await tokensModule.build({ db, bus, log: silentLogger, clients: clientsFor(world), env });
    tokens = createClient(
      TokensService,
      createRouterTransport((router) => app.routes(router)),
    );
  });
  afterAll(async () => {
    await testDb.close();
  });

  behavesAsMint(() => ({ tokens, world }));
});

describe("on a real server", () => {
  let database: TestDatabase;
  let running: RunningService;
  const world = new World();
  let tokens: Client<typeof TokensService>;

  beforeAll(async () => {
    database = await createTestDatabase();
    const listening = await listen({ port: 0, host: "127.0.0.1" });
    running = await startService(tokensModule, {
      databaseUrl: database.url,
      bus: await connectBus({}, "test", silentLogger),
      log: silentLogger,
      clients: clientsFor(world),
      env,
      listening,
      identity: testIdentity("tokens"),
      poolSize: 3,
    });
    tokens = allowedCallerClient(TokensService, listening.url);
  });
  afterAll(async () => {
    await running.stop();
    await database.drop();
  });

  behavesAsMint(() => ({ tokens, world }));
});

describe("a batch's request ids", () => {
  let testDb: ServiceTestDb<TokensDatabase>;
  const world = new World();
  const lines: Record<string, unknown>[] = [];
  let tokens: Client<typeof TokensService>;

  beforeAll(async () => {
    testDb = await openServiceDb<TokensDatabase>("tokens", migrations, 3);
    const log = createLogger({ sink: (line) => lines.push(JSON.parse(line)) });
    const bus = await connectBus({}, "test", silentLogger);
    const app = await tokensModule.build({ db: testDb.db, bus, log, clients: clientsFor(world), env });
    tokens = createClient(
      TokensService,
      createRouterTransport((router) => app.routes(router)),
    );
  });
  afterAll(async () => {
    await testDb.close();
  });

  /** A mint whose session creation fails unexpectedly (logged as an error, under its request id). */
  async function mintThatFails() {
    const created = await tokens.createSpace({ name: "s", tier: Tier.STARTER });
    const spaceId = created.space?.id ?? "";
    const voice = world.voice();
    const avatarId = world.avatar({ spaceId, defaultVoice: { id: voice.id } }).id;
    world.failCreateAfterWrite = new Error("the sessions service broke");
    return { spaceId, request: { mode: SessionMode.LITE, avatarId } };
  }

  it("logs a mint's unexpected failure under the request id it came with", async () => {
    const mint = await mintThatFails();
    const res = await tokens.mintSessionTokensBatch({ mints: [mint, mint], requestIds: ["req-a", "req-b"] });
    expect(res.outcomes.map((o) => o.error?.code)).toEqual([Code.Internal, Code.Internal]);
    const failed = lines.filter((l) => l.level === "error");
    expect(failed.map((l) => l.request_id).sort()).toEqual(["req-a", "req-b"]);
  });

  it("gives a mint whose request id is missing or unusable a fresh one of its own", async () => {
    const mint = await mintThatFails();
    lines.length = 0;
    // Fewer ids than mints, and one that no log should carry.
    const res = await tokens.mintSessionTokensBatch({
      mints: [mint, mint, mint],
      requestIds: ["req-c", "not an id\n"],
    });
    expect(res.outcomes.map((o) => o.error?.code)).toEqual([Code.Internal, Code.Internal, Code.Internal]);
    const ids = lines.filter((l) => l.level === "error").map((l) => String(l.request_id));
    expect(ids).toHaveLength(3);
    expect(ids).toContain("req-c");
    const fresh = ids.filter((id) => id !== "req-c");
    expect(fresh).toHaveLength(2);
    expect(new Set(fresh).size).toBe(2);
    for (const id of fresh)
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  });
});
