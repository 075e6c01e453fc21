import { readFileSync } from "node:fs";
import { type Kysely, sql } from "kysely";
import { findLook, saveLook } from "./look-repository.js";
import { replaceLanguages, replaceLlmModels, saveAvatar, saveVoice } from "./repository.js";
import type { CatalogDatabase, LookSeedFields } from "./schema.js";

/** The catalog file in the repository: reference data, public voices and avatars, the demo space's avatars. */
export interface CatalogFile {
  languages: { language: string; code: string }[];
  llm_models: Record<string, string[]>;
  voices: SeedVoice[];
  public_avatars: SeedAvatar[];
  demo_space_avatars: SeedAvatar[];
}

export interface SeedVoice {
  id: string;
  name: string;
  language: string;
  gender: string;
  preview_url: string;
  voice_engines: string[];
  provider_voice_ids: Record<string, string>;
}

export interface SeedAvatar {
  id: string;
  name: string;
  type: string;
  status: "ACTIVE" | "INIT" | "DEACTIVATED" | "DELETED";
  preview_url: string;
  default_voice_id: string | null;
  is_1080p: boolean;
  sandbox_enabled: boolean;
  /** LookSeed fields, snake_case: the look generated for this avatar. */
  look?: LookSeedFields;
}

export const defaultCatalogPath = new URL("../seed/catalog.json", import.meta.url);

export function readCatalogFile(path: string | URL = defaultCatalogPath): CatalogFile {
  return JSON.parse(readFileSync(path, "utf8")) as CatalogFile;
}

/**
 * Languages and models follow the file exactly; public voices and avatars are added when missing and
 * never overwritten, so operators' later changes survive a restart. Safe when replicas seed together.
 */
export async function seedCatalog(db: Kysely<CatalogDatabase>, file: CatalogFile): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(hashtext('avatar.catalog.seed'))`.execute(trx);
    await replaceLanguages(trx, file.languages);
    await replaceLlmModels(trx, file.llm_models);
    for (const v of file.voices) {
      await saveVoice(trx, { ...v, space_id: null, is_public: true }, false);
    }
    for (const a of file.public_avatars) {
      await saveAvatar(trx, publicAvatar(a), false);
      // Like the avatar itself: set when missing, never over an operator's look.
      if (a.look && !(await findLook(trx, a.id))) await saveLook(trx, a.id, { kind: "seed", seed: a.look });
    }
  });
}

function publicAvatar({ look: _look, ...a }: SeedAvatar) {
  return {
    ...a,
    space_id: null,
    is_public: true,
    default_voice_agent_id: null,
    expires_at: null,
    error_message: "",
  };
}
