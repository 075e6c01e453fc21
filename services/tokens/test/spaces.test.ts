import { createMemoryBus } from "@avatar/bus";
import { Tier, TokensService } from "@avatar/contracts/tokens";
import { errorDetailOf } from "@avatar/runtime";
import { callDirectly, type DirectCalls, eventually } from "@avatar/testkit";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { tokensAdminService } from "../src/service.js";
import { cachedSpaces } from "../src/space-cache.js";
import { tierLimits } from "../src/tiers.js";
import { clearTokens, failure, fixedApiKey, newSigner, openTokensDb, type TokensTestDb } from "./support.js";

let t: TokensTestDb;
let tokens: DirectCalls<typeof TokensService>;

beforeAll(async () => {
  t = await openTokensDb();
  tokens = callDirectly(
    TokensService,
    tokensAdminService(t.db, newSigner(t.db), cachedSpaces(t.db, undefined), createMemoryBus()),
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

describe("createSpace", () => {
  it("creates a free space with a generated id and a first API key shown once", async () => {
    const res = await tokens.createSpace({ name: "  Acme  " });
    expect(res.space).toMatchObject({ name: "Acme", tier: Tier.FREE, maxSessionDuration: 600 });
    expect(res.space?.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-/);
    expect(res.space?.createdAt).toBeDefined();
    expect(res.apiKeySecret).toMatch(/^lak_[A-Za-z0-9_-]{43}$/);
    expect(res.apiKey).toMatchObject({
      spaceId: res.space?.id,
      name: "default",
      prefix: res.apiKeySecret.slice(0, 10),
    });
    expect(res.apiKey?.revokedAt).toBeUndefined();
    const again = await tokens.createSpace({ name: "Other" });
    expect(again.apiKeySecret).not.toBe(res.apiKeySecret);
  });

  it("gives each tier its session-duration limit", async () => {
    expect(tierLimits).toEqual({ free: 600, starter: 1800, pro: 3600, scale: 7200 });
    const cases: [Tier, number][] = [
      [Tier.FREE, 600],
      [Tier.STARTER, 1800],
      [Tier.PRO, 3600],
      [Tier.SCALE, 7200],
    ];
    for (const [tier, limit] of cases) {
      const { space } = await tokens.createSpace({ name: `tier ${tier}`, tier });
      expect(space).toMatchObject({ tier, maxSessionDuration: limit });
    }
  });

  it("takes a configured session-duration limit instead of the tier's", async () => {
    const { space } = await tokens.createSpace({ name: "Custom", tier: Tier.PRO, maxSessionDuration: 42 });
    expect(space?.maxSessionDuration).toBe(42);
    for (const maxSessionDuration of [0, -1]) {
      await expectFailure(
        tokens.createSpace({ name: "Bad", maxSessionDuration }),
        Code.InvalidArgument,
        "max_session_duration",
      );
    }
  });

  it("takes a fixed id and a fixed API key (seeding)", async () => {
    const id = "5e1f0c2a-1111-4000-8000-000000000001";
    const key = fixedApiKey();
    const res = await tokens.createSpace({ name: "Demo", id, apiKey: key });
    expect(res.space?.id).toBe(id);
    expect(res.apiKeySecret).toBe(key);
    expect((await tokens.authenticateApiKey({ apiKey: key })).space?.id).toBe(id);
  });

  it("answers AlreadyExists for a taken id or API key, and creates nothing then", async () => {
    const id = "5e1f0c2a-1111-4000-8000-000000000002";
    const key = fixedApiKey();
    await tokens.createSpace({ name: "First", id, apiKey: key });
    await expectFailure(tokens.createSpace({ name: "Same id", id }), Code.AlreadyExists);
    await expectFailure(tokens.createSpace({ name: "Same key", apiKey: key }), Code.AlreadyExists);
    expect((await tokens.listSpaces()).spaces.map((s) => s.name)).toEqual(["First"]);
  });

  it("rejects a bad tier, name, id or API key as InvalidArgument naming the field", async () => {
    const cases: [Parameters<typeof tokens.createSpace>[0], string][] = [
      [{ name: "T", tier: 99 as Tier }, "tier"],
      [{ name: "" }, "name"],
      [{ name: "   " }, "name"],
      [{ name: "n".repeat(129) }, "name"],
      [{ name: "I", id: "space-1" }, "id"],
      [{ name: "K", apiKey: "a".repeat(23) }, "api_key"],
      [{ name: "K", apiKey: `${"a".repeat(24)} ` }, "api_key"],
      [{ name: "K", apiKey: `${"a".repeat(30)}/` }, "api_key"],
      [{ name: "K", apiKey: "a".repeat(201) }, "api_key"],
    ];
    for (const [req, field] of cases)
      await expectFailure(tokens.createSpace(req), Code.InvalidArgument, field);
    expect((await tokens.listSpaces()).spaces).toEqual([]);

    // Just inside the bounds.
    await tokens.createSpace({ name: "n".repeat(128), apiKey: "a".repeat(24) });
    await tokens.createSpace({ name: "x", apiKey: `A-b_c.${"9".repeat(194)}` });
  });
});

describe("getSpace and listSpaces", () => {
  it("gets a space by id and answers NotFound otherwise", async () => {
    const { space } = await tokens.createSpace({ name: "Acme", tier: Tier.STARTER });
    expect((await tokens.getSpace({ spaceId: space?.id })).space).toEqual(space);
    for (const spaceId of ["", "nope", "5e1f0c2a-1111-4000-8000-0000000000ff"]) {
      await expectFailure(tokens.getSpace({ spaceId }), Code.NotFound, "space_id");
    }
  });

  it("lists spaces in creation order", async () => {
    for (const name of ["one", "two", "three"]) await tokens.createSpace({ name });
    expect((await tokens.listSpaces()).spaces.map((s) => s.name)).toEqual(["one", "two", "three"]);
  });
});

describe("updateSpace", () => {
  it("changing the tier changes the limit when the space has no limit of its own", async () => {
    const { space } = await tokens.createSpace({ name: "Acme" });
    const res = await tokens.updateSpace({ spaceId: space?.id, tier: Tier.SCALE });
    expect(res.space).toMatchObject({ tier: Tier.SCALE, maxSessionDuration: 7200 });
  });

  it("keeps a configured limit across tier changes until 0 clears it", async () => {
    const { space } = await tokens.createSpace({ name: "Acme", maxSessionDuration: 900 });
    const id = space?.id;
    expect((await tokens.updateSpace({ spaceId: id, tier: Tier.PRO })).space?.maxSessionDuration).toBe(900);
    expect(
      (await tokens.updateSpace({ spaceId: id, maxSessionDuration: 1200 })).space?.maxSessionDuration,
    ).toBe(1200);
    const cleared = await tokens.updateSpace({ spaceId: id, maxSessionDuration: 0 });
    expect(cleared.space).toMatchObject({ tier: Tier.PRO, maxSessionDuration: 3600 });
    await expectFailure(
      tokens.updateSpace({ spaceId: id, maxSessionDuration: -5 }),
      Code.InvalidArgument,
      "max_session_duration",
    );
  });

  it("renames, and rejects a bad name or tier", async () => {
    const { space } = await tokens.createSpace({ name: "Acme" });
    expect((await tokens.updateSpace({ spaceId: space?.id, name: " New name " })).space?.name).toBe(
      "New name",
    );
    await expectFailure(tokens.updateSpace({ spaceId: space?.id, name: "" }), Code.InvalidArgument, "name");
    await expectFailure(
      tokens.updateSpace({ spaceId: space?.id, tier: Tier.UNSPECIFIED }),
      Code.InvalidArgument,
      "tier",
    );
    expect((await tokens.getSpace({ spaceId: space?.id })).space).toMatchObject({
      name: "New name",
      tier: Tier.FREE,
    });
  });

  it("with nothing to change returns the space as it is", async () => {
    const { space } = await tokens.createSpace({ name: "Acme", tier: Tier.STARTER });
    expect((await tokens.updateSpace({ spaceId: space?.id })).space).toEqual(space);
  });

  it("answers NotFound for an unknown space", async () => {
    await expectFailure(
      tokens.updateSpace({ spaceId: "5e1f0c2a-1111-4000-8000-0000000000ee", name: "x" }),
      Code.NotFound,
      "space_id",
    );
    await expectFailure(tokens.updateSpace({ spaceId: "nope", name: "x" }), Code.NotFound, "space_id");
  });
});

describe("cached spaces (what minting reads)", () => {
  it("an update reaches the cache of this replica at once and another replica's through the bus", async () => {
    const bus = createMemoryBus();
    const here = cachedSpaces(t.db, bus);
    const there = cachedSpaces(t.db, bus);
    const service = callDirectly(TokensService, tokensAdminService(t.db, newSigner(t.db), here, bus));
    const { space } = await service.createSpace({ name: "Cached", tier: Tier.FREE });
    const id = space?.id ?? "";
    expect((await here.find(id))?.tier).toBe("free");
    expect((await there.find(id))?.tier).toBe("free");
    await service.updateSpace({ spaceId: id, tier: Tier.PRO });
    expect((await here.find(id))?.tier).toBe("pro");
    // Well within the cache's TTL: only the invalidation message can have done it.
    await eventually(async () => expect((await there.find(id))?.tier).toBe("pro"), 2_000);
    await bus.close();
  });
});
