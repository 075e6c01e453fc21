import {
  AvatarLookSchema,
  type AvatarLookSource,
  type CatalogService,
  PosterOrientation,
} from "@avatar/contracts/catalog";
import {
  keyOfLook,
  LOOK_GENERATOR_VERSION,
  LookError,
  LookParamsError,
  lookRequestOf,
  renderPoster,
  resolveLookParams,
  sharedLookWorkers,
} from "@avatar/media/looks";
import { conflict, invalidRequest } from "@avatar/runtime";
import { fromBinary, toBinary } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import type { Kysely } from "kysely";
import { cacheGeneratedLook, findLook, type LookInput } from "./look-repository.js";
import { lookSeedFields } from "./look-seed.js";
import type { AvatarRow, CatalogDatabase } from "./schema.js";

/**
 * Avatars' looks: what an import gives (a finished look, checked here, or a seed), what the renderer
 * reads (GetAvatarLook; a seed's look is generated on first read and kept until the generator changes),
 * and posters (generated and rendered in a look worker thread). An avatar imported without a look gets
 * one generated from its id, so every avatar can be rendered unless its uploaded look cannot; that one
 * is INIT with the reason in error_message.
 */

/** The look an import asks for; `invalid` carries why an uploaded look cannot be rendered. */
export async function lookInputOf(
  source: AvatarLookSource | undefined,
  where: string,
): Promise<LookInput | undefined> {
  const given = source?.source;
  if (!given || given.case === undefined) return undefined;
  if (given.case === "seed") {
    const fields = lookSeedFields(given.value);
    if (!fields.seed)
      throw invalidRequest(`${where}: look seed must not be empty`, { field: "look_source.seed" });
    try {
      resolveLookParams(lookRequestOf(fields));
    } catch (err) {
      if (err instanceof LookParamsError) {
        throw invalidRequest(`${where}: look ${err.message}`, { field: `look_source.seed.${err.field}` });
      }
      throw err;
    }
    return { kind: "seed", seed: fields };
  }
  try {
    await sharedLookWorkers.check(given.value);
  } catch (err) {
    if (err instanceof LookError) return { kind: "invalid", error: `look ${err.message}` };
    throw err;
  }
  return { kind: "upload", look: toBinary(AvatarLookSchema, given.value), lookKey: keyOfLook(given.value) };
}

type LookRpcs = Pick<ServiceImpl<typeof CatalogService>, "getAvatarLook" | "getAvatarPoster">;

const POSTERS_KEPT = 64;

export function lookRpcs(
  db: Kysely<CatalogDatabase>,
  visibleAvatar: (spaceId: string, avatarId: string) => Promise<AvatarRow>,
  findAnyAvatar: (avatarId: string) => Promise<AvatarRow>,
): LookRpcs {
  const posters = new Map<string, Uint8Array>();

  async function lookOf(avatar: AvatarRow) {
    const row = await findLook(db, avatar.id);
    if (row?.error) {
      throw conflict(`Avatar ${avatar.id} cannot be rendered: ${row.error}`, {
        reason: "AVATAR_LOOK_INVALID",
        field: "avatar_id",
      });
    }
    // An uploaded look (no seed) is kept as it is; a generated one only while the generator is the same.
    const current = row?.look && (!row.seed || row.generator === LOOK_GENERATOR_VERSION);
    if (row?.look && current) return { look: fromBinary(AvatarLookSchema, row.look), lookKey: row.look_key };
    const seed = row?.seed ?? { seed: avatar.id };
    const look = await sharedLookWorkers.generate(lookRequestOf(seed));
    const lookKey = keyOfLook(look);
    await cacheGeneratedLook(db, avatar.id, JSON.stringify(seed), {
      look: toBinary(AvatarLookSchema, look),
      lookKey,
      generator: LOOK_GENERATOR_VERSION,
    });
    return { look, lookKey };
  }

  return {
    async getAvatarLook(req) {
      return lookOf(await visibleAvatar(req.spaceId, req.avatarId));
    },

    async getAvatarPoster(req) {
      const avatar = req.anySpace
        ? await findAnyAvatar(req.avatarId)
        : await visibleAvatar(req.spaceId, req.avatarId);
      const { look, lookKey } = await lookOf(avatar);
      const orientation = req.orientation === PosterOrientation.VERTICAL ? "vertical" : "horizontal";
      const key = `${lookKey}:${orientation}`;
      let png = posters.get(key);
      if (!png) {
        png = await renderPoster(look, { orientation, lookKey });
        posters.set(key, png);
        if (posters.size > POSTERS_KEPT) posters.delete(posters.keys().next().value as string);
      }
      return { png, lookKey };
    },
  };
}
