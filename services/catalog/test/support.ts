import { openServiceDb, type ServiceTestDb } from "@avatar/testkit";
import { ConnectError } from "@connectrpc/connect";
import type { Kysely } from "kysely";
import { migrations } from "../src/migrations/index.js";
import { type AvatarInput, saveAvatar, saveVoice, type VoiceInput } from "../src/repository.js";
import type { CatalogDatabase } from "../src/schema.js";

export const SPACE_A = "aaaaaaaa-0000-4000-8000-000000000001";
export const SPACE_B = "bbbbbbbb-0000-4000-8000-000000000002";

export type CatalogTestDb = ServiceTestDb<CatalogDatabase>;

/** A database of this test file with the catalog schema migrated. */
export const openCatalogDb = (): Promise<CatalogTestDb> =>
  openServiceDb<CatalogDatabase>("catalog", migrations);

/** Empties the catalog's tables between tests. */
export async function clearCatalog(db: Kysely<CatalogDatabase>): Promise<void> {
  await db.deleteFrom("avatars").execute();
  await db.deleteFrom("voices").execute();
  await db.deleteFrom("languages").execute();
  await db.deleteFrom("llm_models").execute();
}

let counter = 0;
/** A deterministic-looking, unique UUID for test rows. */
export function testUuid(): string {
  counter += 1;
  return `00000000-0000-4000-8000-${counter.toString(16).padStart(12, "0")}`;
}

export async function addVoice(
  db: Kysely<CatalogDatabase>,
  fields: Partial<VoiceInput> = {},
): Promise<VoiceInput> {
  const voice: VoiceInput = {
    id: testUuid(),
    space_id: null,
    name: "Voice",
    language: "en",
    gender: "female",
    preview_url: "",
    is_public: true,
    voice_engines: ["vendorA"],
    provider_voice_ids: { vendorA: "va-1" },
    ...fields,
  };
  await saveVoice(db, voice, false);
  return voice;
}

export async function addAvatar(
  db: Kysely<CatalogDatabase>,
  fields: Partial<AvatarInput> = {},
): Promise<AvatarInput> {
  const avatar: AvatarInput = {
    id: testUuid(),
    space_id: null,
    name: "Avatar",
    type: "VIDEO",
    status: "ACTIVE",
    preview_url: "",
    default_voice_id: null,
    default_voice_agent_id: null,
    is_1080p: false,
    is_public: true,
    sandbox_enabled: false,
    expires_at: null,
    error_message: "",
    ...fields,
  };
  await saveAvatar(db, avatar, false);
  return avatar;
}

/** The ConnectError a call failed with; fails the test when it did not fail with one. */
export async function failure(promise: Promise<unknown>): Promise<ConnectError> {
  const outcome = await promise.then(
    () => "resolved",
    (e: unknown) => e,
  );
  if (!(outcome instanceof ConnectError)) {
    throw new Error(
      `expected a ConnectError, got ${outcome === "resolved" ? "a response" : String(outcome)}`,
    );
  }
  return outcome;
}
