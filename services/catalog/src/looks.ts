import {
  type AvatarLook,
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
import { cacheGeneratedLook, findLook, findLookHeader, type LookInput } from "./look-repository.js";
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
/**
 * Looks kept decoded, by look key (a hash of the look: a key always means the same look). A session's
 * start and an embed page's poster then read only the look's row header, not its megabytes.
 */
const LOOKS_KEPT = 16;

/** Remembers `value` as the newest entry, forgetting the least recently kept beyond `max`. */
function keep<V>(kept: Map<string, V>, key: string, value: V, max: number): V {
  kept.delete(key);
  kept.set(key, value);
  if (kept.size > max) kept.delete(kept.keys().next().value as string);
  return value;
}

export function lookRpcs(
  db: Kysely<CatalogDatabase>,
  visibleAvatar: (spaceId: string, avatarId: string) => Promise<AvatarRow>,
  findAnyAvatar: (avatarId: string) => Promise<AvatarRow>,
): LookRpcs {
  const posters = new Map<string, Uint8Array>();
  const looks = new Map<string, AvatarLook>();

  async function lookOf(avatar: AvatarRow): Promise<{ look: AvatarLook; lookKey: string }> {
    const head = await findLookHeader(db, avatar.id);
    const kept = head?.has_look && !head.error && isCurrent(head) ? looks.get(head.look_key) : undefined;
    if (head && kept) return { look: keep(looks, head.look_key, kept, LOOKS_KEPT), lookKey: head.look_key };
    const row = await findLook(db, avatar.id);
    if (row?.error) {
      throw conflict(`Avatar ${avatar.id} cannot be rendered: ${row.error}`, {
        reason: "AVATAR_LOOK_INVALID",
        field: "avatar_id",
      });
    }
    if (row?.look && isCurrent(row)) {
      const look = keep(looks, row.look_key, fromBinary(AvatarLookSchema, row.look), LOOKS_KEPT);
      return { look, lookKey: row.look_key };
    }
    const seed = row?.seed ?? { seed: avatar.id };
    const look = await sharedLookWorkers.generate(lookRequestOf(seed));
    const lookKey = keyOfLook(look);
    await cacheGeneratedLook(db, avatar.id, JSON.stringify(seed), {
      look: toBinary(AvatarLookSchema, look),
      lookKey,
      generator: LOOK_GENERATOR_VERSION,
    });
    keep(looks, lookKey, look, LOOKS_KEPT);
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
      const png = keep(
        posters,
        key,
        posters.get(key) ?? (await renderPoster(look, { orientation, lookKey })),
        POSTERS_KEPT,
      );
      return { png, lookKey };
    },
  };
}

/** An uploaded look (no seed) is kept as it is; a generated one only while the generator is the same. */
function isCurrent(row: { seed: unknown; generator: string }): boolean {
  return !row.seed || row.generator === LOOK_GENERATOR_VERSION;
}
