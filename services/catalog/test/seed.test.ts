import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { listAvatars, listLanguages, listLlmModels, listVoices } from "../src/repository.js";
import { type CatalogFile, readCatalogFile, seedCatalog } from "../src/seed.js";
import { type CatalogTestDb, clearCatalog, openCatalogDb } from "./support.js";

let t: CatalogTestDb;
const file = readCatalogFile();

beforeAll(async () => {
  t = await openCatalogDb();
});
afterAll(async () => {
  await t.close();
});
beforeEach(async () => {
  await clearCatalog(t.db);
});

describe("the repository's catalog file", () => {
  it("has the reference data the service relies on", () => {
    expect(file.languages.length).toBeGreaterThan(0);
    expect(file.public_avatars.some((a) => a.sandbox_enabled)).toBe(true);
    expect(file.public_avatars.some((a) => a.is_1080p)).toBe(true);
    const voiceIds = new Set(file.voices.map((v) => v.id));
    for (const a of file.public_avatars) {
      if (a.default_voice_id) expect(voiceIds.has(a.default_voice_id), a.name).toBe(true);
    }
  });
});

describe("seedCatalog", () => {
  it("stores languages in file order and models per provider in file order", async () => {
    await seedCatalog(t.db, file);
    expect(await listLanguages(t.db)).toEqual(
      file.languages.map(({ language, code }) => ({ language, code })),
    );
    const models = await listLlmModels(t.db);
    for (const [provider, list] of Object.entries(file.llm_models)) {
      expect(models.filter((m) => m.provider === provider).map((m) => m.model)).toEqual(list);
    }
    expect(models).toHaveLength(Object.values(file.llm_models).flat().length);
  });

  it("stores the public voices with their engines and provider ids", async () => {
    await seedCatalog(t.db, file);
    const { rows, count } = await listVoices(t.db, { kind: "public" }, 0, 100);
    expect(count).toBe(file.voices.length);
    for (const v of file.voices) {
      expect(rows.find((r) => r.id === v.id)).toMatchObject({
        name: v.name,
        space_id: null,
        is_public: true,
        voice_engines: v.voice_engines,
        provider_voice_ids: v.provider_voice_ids,
      });
    }
  });

  it("stores the public avatars, newest (last in the file) first, with their flags and voices", async () => {
    await seedCatalog(t.db, file);
    const { rows, count } = await listAvatars(t.db, { kind: "public" }, 0, 100);
    expect(count).toBe(file.public_avatars.length);
    expect(rows.map((r) => r.id)).toEqual(file.public_avatars.map((a) => a.id).reverse());

    const sandbox = file.public_avatars.find((a) => a.sandbox_enabled);
    const hd = file.public_avatars.find((a) => a.is_1080p);
    expect(rows.find((r) => r.id === sandbox?.id)).toMatchObject({ sandbox_enabled: true, is_public: true });
    expect(rows.find((r) => r.id === hd?.id)).toMatchObject({ is_1080p: true, space_id: null });
    for (const a of file.public_avatars) {
      const voice = file.voices.find((v) => v.id === a.default_voice_id);
      expect(rows.find((r) => r.id === a.id)).toMatchObject({
        name: a.name,
        status: a.status,
        default_voice_id: a.default_voice_id,
        default_voice_name: voice?.name ?? null,
      });
    }
  });

  it("changes nothing when it runs again", async () => {
    await seedCatalog(t.db, file);
    const snapshot = async () => ({
      languages: await t.db.selectFrom("languages").selectAll().orderBy("code").execute(),
      models: await t.db.selectFrom("llm_models").selectAll().orderBy("provider").orderBy("model").execute(),
      voices: await t.db.selectFrom("voices").selectAll().orderBy("id").execute(),
      avatars: await t.db.selectFrom("avatars").selectAll().orderBy("id").execute(),
    });
    const before = await snapshot();
    await seedCatalog(t.db, file);
    expect(await snapshot()).toEqual(before);
  });

  it("keeps an operator's later change to a public avatar or voice", async () => {
    await seedCatalog(t.db, file);
    const avatar = file.public_avatars[0];
    const voice = file.voices[0];
    if (!avatar || !voice) throw new Error("the catalog file has no avatars or voices");
    await t.db
      .updateTable("avatars")
      .set({ name: "Renamed", status: "DEACTIVATED" })
      .where("id", "=", avatar.id)
      .execute();
    await t.db.updateTable("voices").set({ name: "Renamed voice" }).where("id", "=", voice.id).execute();

    await seedCatalog(t.db, file);
    const avatarRow = await t.db
      .selectFrom("avatars")
      .selectAll()
      .where("id", "=", avatar.id)
      .executeTakeFirst();
    expect(avatarRow).toMatchObject({ name: "Renamed", status: "DEACTIVATED" });
    const voiceRow = await t.db
      .selectFrom("voices")
      .selectAll()
      .where("id", "=", voice.id)
      .executeTakeFirst();
    expect(voiceRow?.name).toBe("Renamed voice");
  });

  it("makes languages and models follow a changed file exactly", async () => {
    await seedCatalog(t.db, file);
    const changed: CatalogFile = {
      ...file,
      languages: [
        { language: "German", code: "de" },
        { language: "English", code: "en" },
      ],
      llm_models: { zeta: ["z-1"], alpha: ["a-2", "a-1"] },
    };
    await seedCatalog(t.db, changed);
    expect(await listLanguages(t.db)).toEqual(changed.languages);
    expect(await listLlmModels(t.db)).toEqual([
      { provider: "alpha", model: "a-2" },
      { provider: "alpha", model: "a-1" },
      { provider: "zeta", model: "z-1" },
    ]);
  });

  it("is safe when replicas seed at the same time", async () => {
    await Promise.all([seedCatalog(t.db, file), seedCatalog(t.db, file), seedCatalog(t.db, file)]);
    expect(await listLanguages(t.db)).toHaveLength(file.languages.length);
    expect((await listAvatars(t.db, { kind: "public" }, 0, 100)).count).toBe(file.public_avatars.length);
  });

  it("leaves everything as it was when a step fails", async () => {
    await seedCatalog(t.db, file);
    const broken: CatalogFile = {
      ...file,
      languages: [{ language: "Only", code: "xx" }],
      public_avatars: [
        { ...(file.public_avatars[0] as CatalogFile["public_avatars"][number]), id: "not-a-uuid" },
      ],
    };
    await expect(seedCatalog(t.db, broken)).rejects.toThrow();
    expect(await listLanguages(t.db)).toHaveLength(file.languages.length);
  });
});
