import { createMemoryBus } from "@avatar/bus";
import { type Avatar, AvatarSchema, AvatarStatus } from "@avatar/contracts/catalog";
import { cacheInvalidations, notFound, publishInvalidation } from "@avatar/runtime";
import { eventually } from "@avatar/testkit";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { type AvatarLookup, cachedAvatars } from "../src/avatar-cache.js";

const SPACE = "5a5a5a5a-0000-4000-8000-000000000001";
const PUBLIC = "0b0b0b0b-0000-4000-8000-000000000001";
const OWN = "0c0c0c0c-0000-4000-8000-000000000002";

/** A catalog that counts its answers: one public avatar, one of SPACE's own, nothing else. */
function countingCatalog() {
  const avatars = new Map<string, Avatar>([
    [PUBLIC, create(AvatarSchema, { id: PUBLIC, name: "Public", isPublic: true })],
    [OWN, create(AvatarSchema, { id: OWN, name: "Own", spaceId: SPACE, status: AvatarStatus.ACTIVE })],
  ]);
  const catalog = {
    calls: 0,
    getAvatar: async (req: { spaceId?: string; avatarId?: string }) => {
      catalog.calls++;
      const avatar = avatars.get(req.avatarId ?? "");
      if (!avatar || !(avatar.isPublic || avatar.spaceId === req.spaceId)) {
        throw notFound("Avatar not found", { field: "avatar_id" });
      }
      return { avatar };
    },
  };
  return { catalog, avatars };
}

const get = (lookup: AvatarLookup, avatarId: string, spaceId = SPACE) =>
  lookup.getAvatar({ spaceId, avatarId }).then((r) => r.avatar);

describe("cachedAvatars", () => {
  it("asks the catalog once for a public avatar and once for a space's own", async () => {
    const { catalog } = countingCatalog();
    const lookup = cachedAvatars(catalog as unknown as AvatarLookup, undefined);
    expect((await get(lookup, PUBLIC))?.name).toBe("Public");
    expect((await get(lookup, PUBLIC))?.name).toBe("Public");
    expect(catalog.calls).toBe(1);
    expect((await get(lookup, OWN))?.name).toBe("Own");
    expect((await get(lookup, OWN))?.name).toBe("Own");
    expect(catalog.calls).toBe(2);
  });

  it("keeps what the catalog answered to each space apart", async () => {
    const { catalog } = countingCatalog();
    const lookup = cachedAvatars(catalog as unknown as AvatarLookup, undefined);
    const other = "6b6b6b6b-0000-4000-8000-000000000002";
    expect((await get(lookup, OWN))?.name).toBe("Own");
    const err = await get(lookup, OWN, other).catch((e: unknown) => e);
    expect(err instanceof ConnectError && err.code).toBe(Code.NotFound);
  });

  it("drops a space's own avatar the moment the catalog's change is confirmed (deactivated, deleted)", async () => {
    const bus = createMemoryBus();
    const { catalog, avatars } = countingCatalog();
    const lookup = cachedAvatars(catalog as unknown as AvatarLookup, bus);
    expect((await get(lookup, OWN))?.status).toBe(AvatarStatus.ACTIVE);
    avatars.set(
      OWN,
      create(AvatarSchema, { id: OWN, name: "Own", spaceId: SPACE, status: AvatarStatus.DEACTIVATED }),
    );
    expect((await get(lookup, OWN))?.status).toBe(AvatarStatus.ACTIVE);
    // What the catalog awaits before it answers the change: after it, no waiting.
    await publishInvalidation(bus, cacheInvalidations.avatars, OWN);
    expect((await get(lookup, OWN))?.status).toBe(AvatarStatus.DEACTIVATED);
    await bus.close();
  });

  it("answers NotFound as the catalog does, and remembers no absence", async () => {
    const { catalog } = countingCatalog();
    const lookup = cachedAvatars(catalog as unknown as AvatarLookup, undefined);
    const other = "6b6b6b6b-0000-4000-8000-000000000002";
    for (let i = 0; i < 2; i++) {
      const err = await get(lookup, OWN, other).catch((e: unknown) => e);
      expect(err instanceof ConnectError && err.code).toBe(Code.NotFound);
    }
    expect(catalog.calls).toBe(2);
  });

  it("drops a public avatar when the catalog says it changed (an operator's import)", async () => {
    const bus = createMemoryBus();
    const { catalog, avatars } = countingCatalog();
    const lookup = cachedAvatars(catalog as unknown as AvatarLookup, bus);
    expect((await get(lookup, PUBLIC))?.name).toBe("Public");
    avatars.set(PUBLIC, create(AvatarSchema, { id: PUBLIC, name: "Renamed", isPublic: true }));
    expect((await get(lookup, PUBLIC))?.name).toBe("Public");
    publishInvalidation(bus, cacheInvalidations.avatars, PUBLIC);
    // Well within the 10 s TTL: only the invalidation can have done it.
    await eventually(async () => expect((await get(lookup, PUBLIC))?.name).toBe("Renamed"), 2_000);
    await bus.close();
  });
});
