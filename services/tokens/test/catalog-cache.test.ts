import { createMemoryBus } from "@avatar/bus";
import { type Avatar, AvatarSchema, AvatarStatus, type Voice, VoiceSchema } from "@avatar/contracts/catalog";
import { cacheInvalidations, notFound, publishInvalidation } from "@avatar/runtime";
import { eventually } from "@avatar/testkit";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { type CatalogLookup, cachedCatalog } from "../src/catalog-cache.js";

const SPACE = "5a5a5a5a-0000-4000-8000-000000000001";
const OTHER = "6b6b6b6b-0000-4000-8000-000000000002";
const PUBLIC = "0b0b0b0b-0000-4000-8000-000000000001";
const OWN = "0c0c0c0c-0000-4000-8000-000000000002";
const VOICE = "0d0d0d0d-0000-4000-8000-000000000003";

/** A catalog that counts its answers: one public avatar, one of SPACE's own, one public voice. */
function countingCatalog() {
  const avatars = new Map<string, Avatar>([
    [PUBLIC, create(AvatarSchema, { id: PUBLIC, name: "Public", isPublic: true })],
    [OWN, create(AvatarSchema, { id: OWN, name: "Own", spaceId: SPACE, status: AvatarStatus.ACTIVE })],
  ]);
  const voices = new Map<string, Voice>([
    [VOICE, create(VoiceSchema, { id: VOICE, name: "Voice", isPublic: true })],
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
    getVoice: async (req: { spaceId?: string; voiceId?: string }) => {
      catalog.calls++;
      const voice = voices.get(req.voiceId ?? "");
      if (!voice) throw notFound("Voice not found", { field: "voice_id" });
      return { voice };
    },
  };
  return {
    catalog,
    avatars,
    voices,
    lookup: (bus?: ReturnType<typeof createMemoryBus>) =>
      cachedCatalog(catalog as unknown as CatalogLookup, bus),
  };
}

const avatar = (lookup: CatalogLookup, avatarId: string, spaceId = SPACE) =>
  lookup.getAvatar({ spaceId, avatarId }).then((r) => r.avatar);
const voice = (lookup: CatalogLookup, voiceId: string, spaceId = SPACE) =>
  lookup.getVoice({ spaceId, voiceId }).then((r) => r.voice);

describe("cachedCatalog", () => {
  it("asks the catalog once for a public avatar, once for a space's own and once for a voice", async () => {
    const { catalog, lookup } = countingCatalog();
    const cached = lookup();
    for (let i = 0; i < 2; i++) {
      expect((await avatar(cached, PUBLIC))?.name).toBe("Public");
      expect((await avatar(cached, OWN))?.name).toBe("Own");
      expect((await voice(cached, VOICE))?.name).toBe("Voice");
    }
    expect(catalog.calls).toBe(3);
  });

  it("keeps what the catalog answered to each space apart, and remembers no absence", async () => {
    const { catalog, lookup } = countingCatalog();
    const cached = lookup();
    expect((await avatar(cached, OWN))?.name).toBe("Own");
    for (let i = 0; i < 2; i++) {
      const err = await avatar(cached, OWN, OTHER).catch((e: unknown) => e);
      expect(err instanceof ConnectError && err.code).toBe(Code.NotFound);
    }
    expect(catalog.calls).toBe(3);
  });

  it("drops a space's own avatar the moment the catalog's change is confirmed (deactivated, deleted)", async () => {
    const bus = createMemoryBus();
    const { avatars, lookup } = countingCatalog();
    const cached = lookup(bus);
    expect((await avatar(cached, OWN))?.status).toBe(AvatarStatus.ACTIVE);
    avatars.set(
      OWN,
      create(AvatarSchema, { id: OWN, name: "Own", spaceId: SPACE, status: AvatarStatus.DEACTIVATED }),
    );
    expect((await avatar(cached, OWN))?.status).toBe(AvatarStatus.ACTIVE);
    // What the catalog awaits before it answers the change: after it, no waiting.
    await publishInvalidation(bus, cacheInvalidations.avatars, OWN);
    expect((await avatar(cached, OWN))?.status).toBe(AvatarStatus.DEACTIVATED);
    await bus.close();
  });

  it("drops a voice when the catalog says an import changed it, and only that voice", async () => {
    const bus = createMemoryBus();
    const { catalog, voices, lookup } = countingCatalog();
    const cached = lookup(bus);
    expect((await voice(cached, VOICE))?.name).toBe("Voice");
    expect((await avatar(cached, PUBLIC))?.name).toBe("Public");
    voices.set(VOICE, create(VoiceSchema, { id: VOICE, name: "Renamed", isPublic: true }));
    await publishInvalidation(bus, cacheInvalidations.voices, VOICE);
    expect((await voice(cached, VOICE))?.name).toBe("Renamed");
    // An avatar's invalidation subject is its own: the avatar stayed cached.
    expect((await avatar(cached, PUBLIC))?.name).toBe("Public");
    expect(catalog.calls).toBe(3);
    await bus.close();
  });

  it("drops a public avatar when the catalog says it changed (an operator's import), without waiting for the TTL", async () => {
    const bus = createMemoryBus();
    const { avatars, lookup } = countingCatalog();
    const cached = lookup(bus);
    expect((await avatar(cached, PUBLIC))?.name).toBe("Public");
    avatars.set(PUBLIC, create(AvatarSchema, { id: PUBLIC, name: "Renamed", isPublic: true }));
    expect((await avatar(cached, PUBLIC))?.name).toBe("Public");
    void publishInvalidation(bus, cacheInvalidations.avatars, PUBLIC);
    // Well within the 10 s TTL: only the invalidation can have done it.
    await eventually(async () => expect((await avatar(cached, PUBLIC))?.name).toBe("Renamed"), 2_000);
    await bus.close();
  });
});
