import {
  AvatarLookSchema,
  type AvatarLookSourceSchema,
  AvatarStatus,
  CatalogService,
  PosterOrientation,
} from "@avatar/contracts/catalog";
import { generateLook, LOOK_GENERATOR_VERSION } from "@avatar/media";
import { errorDetailOf } from "@avatar/runtime";
import { callDirectly } from "@avatar/testkit";
import { clone, type MessageInitShape, toBinary } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { findLook } from "../src/look-repository.js";
import { catalogService } from "../src/service.js";
import {
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
const look = generateLook({ seed: "catalog-test", presentation: "masculine" }, 0.3);

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

const importOne = (lookSource: MessageInitShape<typeof AvatarLookSourceSchema>) =>
  catalog.importAvatars({ avatars: [{ id: testUuid(), name: "Looked", spaceId: SPACE_A, lookSource }] });

describe("avatar looks", () => {
  it("stores an uploaded look and gives it back, with a stable key", async () => {
    const [avatar] = (await importOne({ source: { case: "look", value: look } })).avatars;
    expect(avatar?.status).toBe(AvatarStatus.ACTIVE);
    const first = await catalog.getAvatarLook({ spaceId: SPACE_A, avatarId: avatar?.id ?? "" });
    expect(first.look?.mouths.length).toBe(look.mouths.length);
    expect(first.look?.headPng).toEqual(look.headPng);
    const again = await catalog.getAvatarLook({ spaceId: SPACE_A, avatarId: avatar?.id ?? "" });
    expect(again.lookKey).toBe(first.lookKey);
    expect(first.lookKey).toMatch(/^[0-9a-f]{32}$/);
  });

  it("makes an avatar whose look cannot be rendered INIT, with the reason", async () => {
    const broken = clone(AvatarLookSchema, look);
    broken.mouths = broken.mouths.filter((m) => m.name !== "AI");
    const [avatar] = (await importOne({ source: { case: "look", value: broken } })).avatars;
    expect(avatar?.status).toBe(AvatarStatus.INIT);
    expect(avatar?.errorMessage).toBe("look mouths: missing visemes AI");
    const err = await failure(catalog.getAvatarLook({ spaceId: SPACE_A, avatarId: avatar?.id ?? "" }));
    expect(err.code).toBe(Code.FailedPrecondition);
    expect(errorDetailOf(err)?.reason).toBe("AVATAR_LOOK_INVALID");

    const corrupt = clone(AvatarLookSchema, look);
    corrupt.bodyPng = corrupt.bodyPng.slice(0, corrupt.bodyPng.length - 30);
    const [other] = (await importOne({ source: { case: "look", value: corrupt } })).avatars;
    expect(other?.status).toBe(AvatarStatus.INIT);
    expect(other?.errorMessage).toBe("look body_png: is truncated");
  });

  it("refuses a seed with unknown choices (400 naming the field), storing nothing", async () => {
    const id = testUuid();
    const err = await failure(
      catalog.importAvatars({
        avatars: [
          {
            id,
            name: "Seeded",
            spaceId: SPACE_A,
            lookSource: { source: { case: "seed", value: { seed: "x", hairStyle: "mohawk" } } },
          },
        ],
      }),
    );
    expect(err.code).toBe(Code.InvalidArgument);
    expect(errorDetailOf(err)?.field).toBe("look_source.seed.hair_style");
    expect(await findLook(t.db, id)).toBeUndefined();
  });

  it("generates a look from the seed (or from the id) on first read and keeps it", async () => {
    const [avatar] = (
      await importOne({ source: { case: "seed", value: { seed: "ada", presentation: "feminine" } } })
    ).avatars;
    expect(avatar?.status).toBe(AvatarStatus.ACTIVE);
    expect((await findLook(t.db, avatar?.id ?? ""))?.look).toBeNull();
    const first = await catalog.getAvatarLook({ spaceId: SPACE_A, avatarId: avatar?.id ?? "" });
    expect(first.look?.width).toBeGreaterThan(0);
    expect((await findLook(t.db, avatar?.id ?? ""))?.look_key).toBe(first.lookKey);
    const again = await catalog.getAvatarLook({ spaceId: SPACE_A, avatarId: avatar?.id ?? "" });
    expect(again.lookKey).toBe(first.lookKey);
  });

  it("draws a kept look again when the generator has changed since, never an uploaded one", async () => {
    const [avatar] = (
      await importOne({ source: { case: "seed", value: { seed: "elena", hairStyle: "long" } } })
    ).avatars;
    const id = avatar?.id ?? "";
    const first = await catalog.getAvatarLook({ spaceId: SPACE_A, avatarId: id });
    expect((await findLook(t.db, id))?.generator).toBe(LOOK_GENERATOR_VERSION);
    // As a previous version left it: other bytes under another key.
    await t.db
      .updateTable("avatar_looks")
      .set({ look: toBinary(AvatarLookSchema, look), look_key: "drawn-before", generator: "1" })
      .where("avatar_id", "=", id)
      .execute();
    const redrawn = await catalog.getAvatarLook({ spaceId: SPACE_A, avatarId: id });
    expect(redrawn.lookKey).toBe(first.lookKey);
    expect(await findLook(t.db, id)).toMatchObject({
      look_key: first.lookKey,
      generator: LOOK_GENERATOR_VERSION,
    });

    const [uploaded] = (await importOne({ source: { case: "look", value: look } })).avatars;
    const kept = await catalog.getAvatarLook({ spaceId: SPACE_A, avatarId: uploaded?.id ?? "" });
    expect(kept.look?.headPng).toEqual(look.headPng);
    expect((await findLook(t.db, uploaded?.id ?? ""))?.generator).toBe("");
  });

  it("reads a look's bytes once per look key; a changed key or a look marked broken is read anew", async () => {
    const [avatar] = (await importOne({ source: { case: "look", value: look } })).avatars;
    const id = avatar?.id ?? "";
    const first = await catalog.getAvatarLook({ spaceId: SPACE_A, avatarId: id });
    // The stored bytes spoiled under the same key: only a read that went by the key still gets the look.
    const spoil = { look: new Uint8Array([0xff, 0xff, 0xff]) };
    await t.db.updateTable("avatar_looks").set(spoil).where("avatar_id", "=", id).execute();
    const again = await catalog.getAvatarLook({ spaceId: SPACE_A, avatarId: id });
    expect(again.lookKey).toBe(first.lookKey);
    expect(again.look?.headPng).toEqual(look.headPng);
    const poster = await catalog.getAvatarPoster({ spaceId: SPACE_A, avatarId: id });
    expect(poster.lookKey).toBe(first.lookKey);

    // Another look under its own key is read from the row.
    const other = generateLook({ seed: "another-look", presentation: "feminine" }, 0.3);
    const otherKey = "another-key";
    await t.db
      .updateTable("avatar_looks")
      .set({ look: toBinary(AvatarLookSchema, other), look_key: otherKey })
      .where("avatar_id", "=", id)
      .execute();
    const changed = await catalog.getAvatarLook({ spaceId: SPACE_A, avatarId: id });
    expect(changed.lookKey).toBe(otherKey);
    expect(changed.look?.headPng).toEqual(other.headPng);

    // A look found broken is refused, kept in memory or not.
    await t.db.updateTable("avatar_looks").set({ error: "broken" }).where("avatar_id", "=", id).execute();
    const refused = await failure(catalog.getAvatarLook({ spaceId: SPACE_A, avatarId: id }));
    expect(refused.code).toBe(Code.FailedPrecondition);
  });

  it("forgets the look read least recently when more than 16 are kept", async () => {
    // Seventeen looks, each under its own key: the same pictures, the mouth's anchor a pixel apart.
    const looks = Array.from({ length: 17 }, (_, i) => {
      const one = clone(AvatarLookSchema, look);
      if (one.anchors?.mouth) one.anchors.mouth.x += i;
      return one;
    });
    const { avatars } = await catalog.importAvatars({
      avatars: looks.map((one) => ({
        id: testUuid(),
        name: "Kept",
        spaceId: SPACE_A,
        lookSource: { source: { case: "look", value: one } },
      })),
    });
    const ids = avatars.map((a) => a.id);
    const read = (id: string) => catalog.getAvatarLook({ spaceId: SPACE_A, avatarId: id });
    const [first, second, ...others] = ids as [string, string, ...string[]];
    await read(first);
    await read(second);
    for (const id of others.slice(0, 14)) await read(id);
    await read(first); // read again: the most recent now
    await read(others[14] as string); // the 17th: one must go, the least recently read (the second)
    // Spoiled bytes under the same key: a look still kept comes back whole, a forgotten one cannot.
    const spoil = { look: new Uint8Array([0xff, 0xff, 0xff]) };
    await t.db.updateTable("avatar_looks").set(spoil).where("avatar_id", "in", [first, second]).execute();
    expect((await read(first)).look?.headPng).toEqual(looks[0]?.headPng);
    // Read from the row: its spoiled bytes do not decode.
    await expect(read(second)).rejects.toThrow(/premature EOF/);
  });

  it("serves looks and posters only to the owner (or anyone for public avatars), posters as PNG", async () => {
    const [avatar] = (await importOne({ source: { case: "look", value: look } })).avatars;
    const id = avatar?.id ?? "";
    expect((await failure(catalog.getAvatarLook({ spaceId: SPACE_B, avatarId: id }))).code).toBe(
      Code.NotFound,
    );
    expect((await failure(catalog.getAvatarPoster({ spaceId: SPACE_B, avatarId: id }))).code).toBe(
      Code.NotFound,
    );
    expect((await failure(catalog.getAvatarLook({ spaceId: SPACE_A, avatarId: "nope" }))).code).toBe(
      Code.NotFound,
    );
    const poster = await catalog.getAvatarPoster({
      spaceId: SPACE_A,
      avatarId: id,
      orientation: PosterOrientation.VERTICAL,
    });
    expect([...poster.png.subarray(0, 4)]).toEqual([0x89, 0x50, 0x4e, 0x47]);
    // 720x1280: width and height are in the IHDR chunk.
    const view = Buffer.from(poster.png);
    expect([view.readUInt32BE(16), view.readUInt32BE(20)]).toEqual([720, 1280]);
    const embed = await catalog.getAvatarPoster({ spaceId: "", avatarId: id, anySpace: true });
    expect([Buffer.from(embed.png).readUInt32BE(16)]).toEqual([1280]);
  });
});
