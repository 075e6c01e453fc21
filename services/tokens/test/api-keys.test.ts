import { createHash } from "node:crypto";
import { createMemoryBus } from "@avatar/bus";
import { ApiKeySchema, Tier, TokensService } from "@avatar/contracts/tokens";
import { errorDetailOf, onApiKeyRevoked } from "@avatar/runtime";
import { callDirectly, type DirectCalls } from "@avatar/testkit";
import { toJsonString } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { tokensAdminService } from "../src/service.js";
import { cachedSpaces } from "../src/space-cache.js";
import { clearTokens, failure, fixedApiKey, newSigner, openTokensDb, type TokensTestDb } from "./support.js";

let t: TokensTestDb;
let tokens: DirectCalls<typeof TokensService>;
const bus = createMemoryBus();

beforeAll(async () => {
  t = await openTokensDb();
  tokens = callDirectly(
    TokensService,
    tokensAdminService(t.db, newSigner(t.db), cachedSpaces(t.db, undefined), bus),
  );
});
afterAll(async () => {
  await t.close();
});
beforeEach(async () => {
  await clearTokens(t.db);
});

async function expectFailure(promise: Promise<unknown>, code: Code, field?: string) {
  const err = await failure(promise);
  expect(err.code, err.message).toBe(code);
  if (field !== undefined) expect(errorDetailOf(err)?.field).toBe(field);
  return err;
}

async function newSpace(name = "Acme", tier = Tier.STARTER) {
  const res = await tokens.createSpace({ name, tier });
  if (!res.space || !res.apiKey) throw new Error("createSpace returned no space or key");
  return { space: res.space, key: res.apiKey, secret: res.apiKeySecret };
}

describe("revocation", () => {
  it("is announced on the bus, and the record by id shows it", async () => {
    const { space, key, secret } = await newSpace();
    const heard: { apiKeyId: string; spaceId: string }[] = [];
    const sub = onApiKeyRevoked(bus, (r) => heard.push({ apiKeyId: r.apiKeyId, spaceId: r.spaceId }));
    try {
      expect((await tokens.getApiKey({ apiKeyId: key.id })).apiKey?.revokedAt).toBeUndefined();
      await tokens.revokeApiKey({ apiKeyId: key.id });
      await vi.waitFor(() => expect(heard).toEqual([{ apiKeyId: key.id, spaceId: space.id }]));
      expect((await tokens.getApiKey({ apiKeyId: key.id })).apiKey?.revokedAt).toBeDefined();
      await expectFailure(tokens.authenticateApiKey({ apiKey: secret }), Code.Unauthenticated);
      await expectFailure(
        tokens.getApiKey({ apiKeyId: "00000000-0000-4000-8000-000000000000" }),
        Code.NotFound,
      );
    } finally {
      await sub.unsubscribe();
    }
  });
});

describe("authenticateApiKey", () => {
  it("resolves the right key to its record and its space", async () => {
    const { space, key, secret } = await newSpace();
    const res = await tokens.authenticateApiKey({ apiKey: secret });
    expect(res.apiKey).toEqual(key);
    expect(res.space).toEqual(space);
    expect(res.space?.maxSessionDuration).toBe(1800);
  });

  it("answers Unauthenticated for a wrong, empty or revoked key", async () => {
    const { key, secret } = await newSpace();
    for (const apiKey of [`${secret}x`, secret.slice(0, -1), secret.toUpperCase(), "", " "]) {
      await expectFailure(tokens.authenticateApiKey({ apiKey }), Code.Unauthenticated);
    }
    await tokens.revokeApiKey({ apiKeyId: key.id });
    const err = await expectFailure(tokens.authenticateApiKey({ apiKey: secret }), Code.Unauthenticated);
    expect(err.rawMessage).toBe("Not authenticated");
  });

  it("keeps working for the space's other keys when one is revoked", async () => {
    const { space, key } = await newSpace();
    const second = await tokens.createApiKey({ spaceId: space.id, name: "ci" });
    await tokens.revokeApiKey({ apiKeyId: key.id });
    expect((await tokens.authenticateApiKey({ apiKey: second.apiKeySecret })).apiKey?.name).toBe("ci");
  });
});

describe("createApiKey", () => {
  it("creates a generated key that authenticates, named `key` unless named", async () => {
    const { space } = await newSpace();
    const unnamed = await tokens.createApiKey({ spaceId: space.id });
    expect(unnamed.apiKey).toMatchObject({
      spaceId: space.id,
      name: "key",
      prefix: unnamed.apiKeySecret.slice(0, 10),
    });
    expect(unnamed.apiKeySecret).toMatch(/^lak_/);
    const named = await tokens.createApiKey({ spaceId: space.id, name: "  backend  " });
    expect(named.apiKey?.name).toBe("backend");
    for (const created of [unnamed, named]) {
      expect((await tokens.authenticateApiKey({ apiKey: created.apiKeySecret })).apiKey?.id).toBe(
        created.apiKey?.id,
      );
    }
  });

  it("takes a fixed key (seeding), and refuses one that is taken or too weak", async () => {
    const { space, secret } = await newSpace();
    const key = fixedApiKey("fixed");
    const res = await tokens.createApiKey({ spaceId: space.id, apiKey: key });
    expect(res.apiKeySecret).toBe(key);
    expect(res.apiKey?.prefix).toBe(key.slice(0, 10));
    expect((await tokens.authenticateApiKey({ apiKey: key })).space?.id).toBe(space.id);

    await expectFailure(tokens.createApiKey({ spaceId: space.id, apiKey: key }), Code.AlreadyExists);
    await expectFailure(tokens.createApiKey({ spaceId: space.id, apiKey: secret }), Code.AlreadyExists);
    await expectFailure(
      tokens.createApiKey({ spaceId: space.id, apiKey: "short-key" }),
      Code.InvalidArgument,
      "api_key",
    );
  });

  it("answers NotFound for an unknown space and InvalidArgument for a too long name", async () => {
    const { space } = await newSpace();
    await expectFailure(
      tokens.createApiKey({ spaceId: "5e1f0c2a-2222-4000-8000-000000000001" }),
      Code.NotFound,
      "space_id",
    );
    await expectFailure(tokens.createApiKey({ spaceId: "x" }), Code.NotFound, "space_id");
    await expectFailure(
      tokens.createApiKey({ spaceId: space.id, name: "k".repeat(129) }),
      Code.InvalidArgument,
      "name",
    );
  });
});

describe("listApiKeys", () => {
  it("lists the space's keys in creation order and never their material beyond the prefix", async () => {
    const { space, secret } = await newSpace();
    const second = await tokens.createApiKey({ spaceId: space.id, name: "second" });
    await newSpace("Other space");
    const { apiKeys } = await tokens.listApiKeys({ spaceId: space.id });
    expect(apiKeys.map((k) => k.name)).toEqual(["default", "second"]);

    const listed = apiKeys.map((k) => toJsonString(ApiKeySchema, k)).join("\n");
    for (const s of [secret, second.apiKeySecret]) {
      expect(listed).toContain(s.slice(0, 10));
      expect(listed).not.toContain(s.slice(0, 11));
      expect(listed).not.toContain(createHash("sha256").update(s).digest("hex"));
    }
  });

  it("answers NotFound for an unknown space", async () => {
    await expectFailure(
      tokens.listApiKeys({ spaceId: "5e1f0c2a-2222-4000-8000-000000000002" }),
      Code.NotFound,
    );
  });

  it("stores a hash of each key, never the key", async () => {
    const { secret } = await newSpace();
    const rows = await t.db.selectFrom("api_keys").selectAll().execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]?.key_hash).toBe(createHash("sha256").update(secret).digest("hex"));
    expect(JSON.stringify(rows)).not.toContain(secret);
  });
});

describe("revokeApiKey", () => {
  it("revokes once: a second revoke keeps the first time", async () => {
    const { space, key } = await newSpace();
    const first = await tokens.revokeApiKey({ apiKeyId: key.id });
    expect(first.apiKey?.revokedAt).toBeDefined();
    const second = await tokens.revokeApiKey({ apiKeyId: key.id });
    expect(second.apiKey?.revokedAt).toEqual(first.apiKey?.revokedAt);
    const listed = (await tokens.listApiKeys({ spaceId: space.id })).apiKeys[0];
    expect(listed?.revokedAt).toEqual(first.apiKey?.revokedAt);
  });

  it("answers NotFound for an unknown key id", async () => {
    for (const apiKeyId of ["", "nope", "5e1f0c2a-2222-4000-8000-000000000003"]) {
      await expectFailure(tokens.revokeApiKey({ apiKeyId }), Code.NotFound, "api_key_id");
    }
  });
});
