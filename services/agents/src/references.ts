import { type Avatar, AvatarStatus, type CatalogService, type Voice } from "@avatar/contracts/catalog";
import { type Client, Code, ConnectError } from "@connectrpc/connect";
import { lookupId, missingResource } from "./checks.js";
import { findContext } from "./contexts/repository.js";
import { findLlmConfiguration } from "./llm-configurations/repository.js";
import type { ContextRow, Db, LlmConfigurationRow, SecretRow, VoiceAgentRow } from "./schema.js";
import { findSecret } from "./secrets/repository.js";
import { findVoiceAgent } from "./voice-agents/repository.js";

/**
 * Resolving ids that a request names, for the caller's space: another space's resource is reported
 * exactly like a missing one (404 naming the field). Public contexts and voice agents are readable by
 * every space; secrets and LLM configurations belong to their space alone.
 */

export type CatalogClient = Pick<Client<typeof CatalogService>, "getAvatar" | "getVoice" | "listLanguages">;

/** What resolving ids needs: the service's tables and the catalog (avatars, voices, languages). */
export interface ResolveDeps {
  db: Db;
  catalog: CatalogClient;
}

const readable = (spaceId: string, row: { space_id: string; is_public: boolean }) =>
  row.is_public || row.space_id === spaceId;

export async function readableContext(
  db: Db,
  spaceId: string,
  id: string,
  field: string,
): Promise<ContextRow> {
  const row = await findContext(db, lookupId(id, "Context", field));
  if (!row || !readable(spaceId, row)) throw missingResource("Context", field);
  return row;
}

export async function ownContext(db: Db, spaceId: string, id: string, field: string): Promise<ContextRow> {
  const row = await findContext(db, lookupId(id, "Context", field));
  if (!row || row.space_id !== spaceId) throw missingResource("Context", field);
  return row;
}

export async function readableVoiceAgent(
  db: Db,
  spaceId: string,
  id: string,
  field: string,
): Promise<VoiceAgentRow> {
  const row = await findVoiceAgent(db, lookupId(id, "Voice agent", field));
  if (!row || !readable(spaceId, row)) throw missingResource("Voice agent", field);
  return row;
}

export async function ownSecret(db: Db, spaceId: string, id: string, field: string): Promise<SecretRow> {
  const row = await findSecret(db, lookupId(id, "Secret", field));
  if (!row || row.space_id !== spaceId) throw missingResource("Secret", field);
  return row;
}

export async function ownLlmConfiguration(
  db: Db,
  spaceId: string,
  id: string,
  field: string,
): Promise<LlmConfigurationRow> {
  const row = await findLlmConfiguration(db, lookupId(id, "LLM configuration", field));
  if (!row || row.space_id !== spaceId) throw missingResource("LLM configuration", field);
  return row;
}

/** The catalog answers NotFound for ids the space cannot see; that becomes our 404 for `field`. */
async function orMissing<T>(call: Promise<T>, what: string, field: string): Promise<T> {
  try {
    return await call;
  } catch (err) {
    if (err instanceof ConnectError && err.code === Code.NotFound) throw missingResource(what, field);
    throw err;
  }
}

export async function visibleVoice(
  catalog: CatalogClient,
  spaceId: string,
  id: string,
  field: string,
): Promise<Voice> {
  const { voice } = await orMissing(
    catalog.getVoice({ spaceId, voiceId: lookupId(id, "Voice", field) }),
    "Voice",
    field,
  );
  if (!voice) throw missingResource("Voice", field);
  return voice;
}

/** An avatar the space can use: its own or a public one, not deleted. */
export async function visibleAvatar(
  catalog: CatalogClient,
  spaceId: string,
  id: string,
  field: string,
): Promise<Avatar> {
  const { avatar } = await orMissing(
    catalog.getAvatar({ spaceId, avatarId: lookupId(id, "Avatar", field) }),
    "Avatar",
    field,
  );
  if (!avatar || avatar.status === AvatarStatus.DELETED) throw missingResource("Avatar", field);
  return avatar;
}

/** True when the catalog lists the language code. */
export async function knownLanguage(catalog: CatalogClient, code: string): Promise<boolean> {
  const { languages } = await catalog.listLanguages({});
  return languages.some((l) => l.code === code);
}
