import { AvatarStatus, CatalogService, VoiceType } from "@avatar/contracts/catalog";
import { errorDetailOf, silentLogger } from "@avatar/runtime";
import { callDirectly } from "@avatar/testkit";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import * as repo from "../src/repository.js";
import { catalogService } from "../src/service.js";
import {
  addAvatar,
  addVoice,
  type CatalogTestDb,
  clearCatalog,
  failure,
  openCatalogDb,
  SPACE_A,
  SPACE_B,
  testUuid,
} from "./support.js";

let t: CatalogTestDb;
let catalog: ReturnType<typeof callDirectly<typeof CatalogService>>;

beforeAll(async () => {
  t = await openCatalogDb();
  catalog = callDirectly(CatalogService, catalogService(t.db));
});
afterAll(async () => {
  await t.close();
});
beforeEach(async () => {
  await clearCatalog(t.db);
});

async function expectFailure(promise: Promise<unknown>, code: Code, field?: string) {
  const err = await failure(promise);
  expect(err.code, err.message).toBe(code);
  if (field !== undefined) expect(errorDetailOf(err)?.field).toBe(field);
  return err;
}

/**
 * A change announcement as the bus confirms it (publishInvalidation), a moment after the call: `told`
 * lists the ids whose announcement has resolved.
 */
function announcedLater() {
  const told: string[] = [];
  const announce = async (ids: readonly string[]) => {
    await new Promise((r) => setTimeout(r, 5));
    told.push(...ids);
  };
  return { told, announce };
}

describe("languages and models", () => {
  it("lists languages in their stored order", async () => {
    await repo.replaceLanguages(t.db, [
      { language: "French", code: "fr" },
      { language: "English", code: "en" },
    ]);
    expect((await catalog.listLanguages()).languages.map((l) => [l.code, l.language])).toEqual([
      ["fr", "French"],
      ["en", "English"],
    ]);
  });

  it("groups models by provider, keeping each provider's order", async () => {
    await repo.replaceLlmModels(t.db, { vendorB: ["b2", "b1"], vendorA: ["a1"] });
    const { providers } = await catalog.listLlmModels();
    expect(providers.map((p) => ({ provider: p.provider, models: p.models }))).toEqual([
      { provider: "vendorA", models: ["a1"] },
      { provider: "vendorB", models: ["b2", "b1"] },
    ]);
  });
});

describe("listAvatars", () => {
  it("pages through the space's own avatars, newest first, with the total count", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 25; i++)
      ids.push((await addAvatar(t.db, { space_id: SPACE_A, is_public: false, name: `A${i}` })).id);
    const newestFirst = [...ids].reverse();

    const first = await catalog.listAvatars({ spaceId: SPACE_A, page: { page: 1, pageSize: 10 } });
    expect(first.avatars.map((a) => a.id)).toEqual(newestFirst.slice(0, 10));
    expect(first.page).toMatchObject({ count: 25, page: 1, pageSize: 10 });

    const last = await catalog.listAvatars({ spaceId: SPACE_A, page: { page: 3, pageSize: 10 } });
    expect(last.avatars.map((a) => a.id)).toEqual(newestFirst.slice(20));

    const beyond = await catalog.listAvatars({ spaceId: SPACE_A, page: { page: 4, pageSize: 10 } });
    expect(beyond.avatars).toEqual([]);
    expect(beyond.page?.count).toBe(25);

    const defaults = await catalog.listAvatars({ spaceId: SPACE_A });
    expect(defaults.avatars).toHaveLength(20);
    expect(defaults.page).toMatchObject({ page: 1, pageSize: 20 });
  });

  it("leaves out deleted avatars, other spaces' avatars and public ones", async () => {
    const own = await addAvatar(t.db, { space_id: SPACE_A, is_public: false, status: "DEACTIVATED" });
    await addAvatar(t.db, { space_id: SPACE_A, is_public: false, status: "DELETED" });
    await addAvatar(t.db, { space_id: SPACE_B, is_public: false });
    await addAvatar(t.db, { space_id: null, is_public: true });
    const res = await catalog.listAvatars({ spaceId: SPACE_A });
    expect(res.avatars.map((a) => [a.id, a.status])).toEqual([[own.id, AvatarStatus.DEACTIVATED]]);
    expect(res.page?.count).toBe(1);
  });

  it("finds nothing for a space id that is not a UUID (never a database error)", async () => {
    await addAvatar(t.db, { space_id: SPACE_A, is_public: false });
    for (const spaceId of ["", "not-a-uuid", "'; drop table avatars; --"]) {
      const res = await catalog.listAvatars({ spaceId });
      expect(res.avatars).toEqual([]);
      expect(res.page?.count).toBe(0);
    }
  });
});

describe("listPublicAvatars", () => {
  it("lists public avatars of every origin, newest first, without deleted ones", async () => {
    const older = await addAvatar(t.db, { space_id: null, is_public: true });
    await addAvatar(t.db, { space_id: SPACE_A, is_public: false });
    const shared = await addAvatar(t.db, { space_id: SPACE_B, is_public: true });
    await addAvatar(t.db, { space_id: null, is_public: true, status: "DELETED" });
    const res = await catalog.listPublicAvatars({});
    expect(res.avatars.map((a) => a.id)).toEqual([shared.id, older.id]);
    expect(res.page?.count).toBe(2);
  });
});

describe("getAvatar", () => {
  it("returns the space's own avatar with its default voice", async () => {
    const voice = await addVoice(t.db, { name: "Ava" });
    const avatar = await addAvatar(t.db, {
      space_id: SPACE_A,
      is_public: false,
      name: "Mine",
      default_voice_id: voice.id,
      is_1080p: true,
      sandbox_enabled: true,
    });
    const res = await catalog.getAvatar({ spaceId: SPACE_A, avatarId: avatar.id });
    expect(res.avatar).toMatchObject({
      id: avatar.id,
      spaceId: SPACE_A,
      name: "Mine",
      type: "VIDEO",
      status: AvatarStatus.ACTIVE,
      defaultVoice: { id: voice.id, name: "Ava" },
      is1080p: true,
      isPublic: false,
      sandboxEnabled: true,
      isExpired: false,
    });
    expect(res.avatar?.createdAt).toBeDefined();
  });

  it("answers NotFound for another space's private avatar", async () => {
    const avatar = await addAvatar(t.db, { space_id: SPACE_B, is_public: false });
    await expectFailure(
      catalog.getAvatar({ spaceId: SPACE_A, avatarId: avatar.id }),
      Code.NotFound,
      "avatar_id",
    );
    await expectFailure(catalog.getAvatar({ spaceId: "", avatarId: avatar.id }), Code.NotFound, "avatar_id");
  });

  it("shows public avatars to every space, and to callers without one", async () => {
    const avatar = await addAvatar(t.db, { space_id: null, is_public: true });
    for (const spaceId of [SPACE_A, SPACE_B, ""]) {
      expect((await catalog.getAvatar({ spaceId, avatarId: avatar.id })).avatar?.id).toBe(avatar.id);
    }
  });

  it("answers NotFound for ids that are not UUIDs or do not exist", async () => {
    for (const avatarId of ["", "nope", "123", `${testUuid()}x`, testUuid()]) {
      await expectFailure(catalog.getAvatar({ spaceId: SPACE_A, avatarId }), Code.NotFound, "avatar_id");
    }
  });

  it("derives is_expired from expires_at", async () => {
    const past = await addAvatar(t.db, { expires_at: new Date(Date.now() - 60_000) });
    const future = await addAvatar(t.db, { expires_at: new Date(Date.now() + 3_600_000) });
    const never = await addAvatar(t.db, { expires_at: null });
    const expired = async (id: string) =>
      (await catalog.getAvatar({ spaceId: SPACE_A, avatarId: id })).avatar?.isExpired;
    expect(await expired(past.id)).toBe(true);
    expect(await expired(future.id)).toBe(false);
    expect(await expired(never.id)).toBe(false);
  });
});

describe("voices", () => {
  async function threeVoices() {
    return {
      pub: await addVoice(t.db, { name: "Public", space_id: null, is_public: true }),
      mine: await addVoice(t.db, { name: "Mine", space_id: SPACE_A, is_public: false }),
      theirs: await addVoice(t.db, { name: "Theirs", space_id: SPACE_B, is_public: false }),
    };
  }
  const names = (res: { voices: { name: string }[] }) => res.voices.map((v) => v.name);

  it("lists public, private or both (ordered by name) by voice_type, never another space's", async () => {
    await threeVoices();
    expect(names(await catalog.listVoices({ spaceId: SPACE_A, voiceType: VoiceType.PUBLIC }))).toEqual([
      "Public",
    ]);
    expect(names(await catalog.listVoices({ spaceId: SPACE_A, voiceType: VoiceType.PRIVATE }))).toEqual([
      "Mine",
    ]);
    const both = await catalog.listVoices({ spaceId: SPACE_A, voiceType: VoiceType.UNSPECIFIED });
    expect(names(both)).toEqual(["Mine", "Public"]);
    expect(both.page?.count).toBe(2);
  });

  it("pages voices with the total count", async () => {
    for (let i = 0; i < 5; i++) await addVoice(t.db, { name: `V${i}` });
    const res = await catalog.listVoices({
      spaceId: SPACE_A,
      voiceType: VoiceType.PUBLIC,
      page: { page: 2, pageSize: 2 },
    });
    expect(names(res)).toEqual(["V2", "V3"]);
    expect(res.page).toMatchObject({ count: 5, page: 2, pageSize: 2 });
  });

  it("lists only public voices for a space id that is not a UUID (never a database error)", async () => {
    await threeVoices();
    expect(names(await catalog.listVoices({ spaceId: "x", voiceType: VoiceType.UNSPECIFIED }))).toEqual([
      "Public",
    ]);
    expect(names(await catalog.listVoices({ spaceId: "", voiceType: VoiceType.PRIVATE }))).toEqual([]);
  });

  it("gets a visible voice with its engines and provider ids, and NotFound otherwise", async () => {
    const { pub, mine, theirs } = await threeVoices();
    const own = await catalog.getVoice({ spaceId: SPACE_A, voiceId: mine.id });
    expect(own.voice).toMatchObject({
      id: mine.id,
      spaceId: SPACE_A,
      isPublic: false,
      voiceEngines: ["vendorA"],
      providerVoiceIds: { vendorA: "va-1" },
    });
    expect((await catalog.getVoice({ spaceId: SPACE_B, voiceId: pub.id })).voice?.spaceId).toBe("");
    await expectFailure(
      catalog.getVoice({ spaceId: SPACE_A, voiceId: theirs.id }),
      Code.NotFound,
      "voice_id",
    );
    await expectFailure(
      catalog.getVoice({ spaceId: SPACE_A, voiceId: "not-a-uuid" }),
      Code.NotFound,
      "voice_id",
    );
    await expectFailure(
      catalog.getVoice({ spaceId: SPACE_A, voiceId: testUuid() }),
      Code.NotFound,
      "voice_id",
    );
  });
});

describe("importVoices", () => {
  const voice = (fields: Record<string, unknown> = {}) => ({
    name: "Imported",
    language: "de",
    gender: "male",
    previewUrl: "https://example.test/v.mp3",
    voiceEngines: ["vendorA", "vendorD"],
    providerVoiceIds: { vendorA: "a-1", vendorD: "d-1" },
    ...fields,
  });

  it("creates voices (an id when none is given; public unless they belong to a space)", async () => {
    const fixedId = testUuid();
    const res = await catalog.importVoices({
      voices: [voice({ id: fixedId.toUpperCase() }), voice({ spaceId: SPACE_A, name: "  Private  " })],
    });
    expect(res.voices).toHaveLength(2);
    const [fixed, own] = res.voices;
    expect(fixed).toMatchObject({
      id: fixedId,
      isPublic: true,
      spaceId: "",
      voiceEngines: ["vendorA", "vendorD"],
    });
    expect(own).toMatchObject({ spaceId: SPACE_A, isPublic: false, name: "Private" });
    expect(own?.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(await repo.findVoice(t.db, own?.id ?? "")).toMatchObject({
      provider_voice_ids: { vendorA: "a-1", vendorD: "d-1" },
    });
  });

  it("replaces a voice imported again under its id", async () => {
    const id = testUuid();
    await catalog.importVoices({ voices: [voice({ id })] });
    const res = await catalog.importVoices({
      voices: [voice({ id, name: "Renamed", voiceEngines: ["vendorE"] })],
    });
    expect(res.voices[0]).toMatchObject({ id, name: "Renamed", voiceEngines: ["vendorE"] });
    expect((await repo.listVoices(t.db, { kind: "public" }, 0, 10)).count).toBe(1);
  });

  it("answers an import once the processes that cache voices were told which changed", async () => {
    const { told, announce: voiceChanged } = announcedLater();
    const tracked = callDirectly(CatalogService, catalogService(t.db, { log: silentLogger, voiceChanged }));
    const res = await tracked.importVoices({ voices: [voice(), voice({ spaceId: SPACE_A })] });
    expect(told).toEqual(res.voices.map((v) => v.id));
  });

  it("rejects bad names, ids and engines as InvalidArgument naming the field", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ name: "" }, "name"],
      [{ name: "   " }, "name"],
      [{ name: "x".repeat(65) }, "name"],
      [{ id: "not-a-uuid" }, "id"],
      [{ spaceId: "space-1" }, "space_id"],
      [{ voiceEngines: ["vendorA", "vendorZ"] }, "voice_engines"],
    ];
    for (const [fields, field] of cases) {
      const err = await expectFailure(
        catalog.importVoices({ voices: [voice(fields)] }),
        Code.InvalidArgument,
        field,
      );
      expect(err.rawMessage).toMatch(/^voices\[0\]: /);
    }
    expect((await catalog.importVoices({ voices: [voice({ name: "x".repeat(64) })] })).voices).toHaveLength(
      1,
    );
  });

  it("imports nothing when one voice of the batch is invalid", async () => {
    const err = await expectFailure(
      catalog.importVoices({ voices: [voice({ name: "Good" }), voice({ name: "" })] }),
      Code.InvalidArgument,
      "name",
    );
    expect(err.rawMessage).toMatch(/^voices\[1\]: /);
    expect((await repo.listVoices(t.db, { kind: "public" }, 0, 10)).count).toBe(0);
  });
});

describe("importAvatars", () => {
  const avatar = (fields: Record<string, unknown> = {}) => ({
    name: "Imported",
    previewUrl: "https://example.test/a.webp",
    ...fields,
  });

  it("creates avatars with the defaults: VIDEO, ACTIVE, public unless they belong to a space", async () => {
    const pub = await addVoice(t.db, { name: "Ava" });
    const res = await catalog.importAvatars({
      avatars: [
        avatar({ defaultVoice: { id: pub.id }, is1080p: true, sandboxEnabled: true }),
        avatar({ spaceId: SPACE_A, status: AvatarStatus.INIT, type: "PHOTO" }),
      ],
    });
    expect(res.avatars[0]).toMatchObject({
      type: "VIDEO",
      status: AvatarStatus.ACTIVE,
      isPublic: true,
      defaultVoice: { id: pub.id, name: "Ava" },
      is1080p: true,
      sandboxEnabled: true,
    });
    expect(res.avatars[1]).toMatchObject({
      type: "PHOTO",
      status: AvatarStatus.INIT,
      isPublic: false,
      spaceId: SPACE_A,
    });
    expect((await catalog.listAvatars({ spaceId: SPACE_A })).avatars.map((a) => a.id)).toEqual([
      res.avatars[1]?.id,
    ]);
  });

  it("answers an import, an update and a delete once the processes that cache avatars were told which changed", async () => {
    const { told, announce: avatarChanged } = announcedLater();
    const tracked = callDirectly(CatalogService, catalogService(t.db, { log: silentLogger, avatarChanged }));
    const res = await tracked.importAvatars({ avatars: [avatar(), avatar({ spaceId: SPACE_A })] });
    const [pub, own] = res.avatars.map((a) => a.id);
    expect(told).toEqual([pub, own]);
    await tracked.updateAvatar({ spaceId: SPACE_A, avatarId: own ?? "", name: "Renamed" });
    expect(told).toEqual([pub, own, own]);
    await tracked.deleteAvatar({ spaceId: SPACE_A, avatarId: own ?? "" });
    expect(told).toEqual([pub, own, own, own]);
  });

  it("accepts the space's own private voice and rejects another space's or an unknown one as NotFound", async () => {
    const mine = await addVoice(t.db, { space_id: SPACE_A, is_public: false });
    const theirs = await addVoice(t.db, { space_id: SPACE_B, is_public: false });
    // Ids are compared as UUIDs, whatever their letter case.
    const ok = await catalog.importAvatars({
      avatars: [avatar({ spaceId: SPACE_A.toUpperCase(), defaultVoice: { id: mine.id.toUpperCase() } })],
    });
    expect(ok.avatars[0]).toMatchObject({ spaceId: SPACE_A, defaultVoice: { id: mine.id } });
    await expectFailure(
      catalog.importAvatars({ avatars: [avatar({ spaceId: SPACE_A, defaultVoice: { id: theirs.id } })] }),
      Code.NotFound,
      "default_voice_id",
    );
    await expectFailure(
      catalog.importAvatars({ avatars: [avatar({ defaultVoice: { id: testUuid() } })] }),
      Code.NotFound,
      "default_voice_id",
    );
  });

  it("rejects bad names and ids as InvalidArgument naming the field", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ name: "" }, "name"],
      [{ name: "y".repeat(65) }, "name"],
      [{ id: "abc" }, "id"],
      [{ spaceId: "abc" }, "space_id"],
      [{ defaultVoice: { id: "abc" } }, "default_voice_id"],
      [{ defaultVoiceAgentId: "abc" }, "default_voice_agent_id"],
    ];
    for (const [fields, field] of cases) {
      await expectFailure(catalog.importAvatars({ avatars: [avatar(fields)] }), Code.InvalidArgument, field);
    }
  });

  it("imports nothing when one avatar of the batch fails", async () => {
    await expectFailure(
      catalog.importAvatars({
        avatars: [avatar({ name: "Good" }), avatar({ defaultVoice: { id: testUuid() } })],
      }),
      Code.NotFound,
    );
    await expectFailure(
      catalog.importAvatars({ avatars: [avatar({ name: "Good" }), avatar({ name: "" })] }),
      Code.InvalidArgument,
    );
    expect((await catalog.listPublicAvatars({})).page?.count).toBe(0);
  });

  it("replaces an avatar imported again under its id, keeping its place in listings", async () => {
    const id = testUuid();
    await catalog.importAvatars({ avatars: [avatar({ id })] });
    const newer = await addAvatar(t.db);
    await catalog.importAvatars({
      avatars: [avatar({ id, name: "Again", status: AvatarStatus.DEACTIVATED })],
    });
    const res = await catalog.listPublicAvatars({});
    expect(res.avatars.map((a) => [a.id, a.name])).toEqual([
      [newer.id, "Avatar"],
      [id, "Again"],
    ]);
  });
});
