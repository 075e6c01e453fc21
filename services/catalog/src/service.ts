import { randomUUID } from "node:crypto";
import {
  type Avatar,
  type CatalogService,
  ListLlmModelsResponseSchema,
  type Voice,
  VoiceType,
} from "@avatar/contracts/catalog";
import { invalidRequest, isUuid, notFound, pageInfo, pageWindow, silentLogger } from "@avatar/runtime";
import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import type { Kysely } from "kysely";
import { type AvatarWriteDeps, avatarWriteRpcs } from "./avatar-writes.js";
import { type LookInput, saveLook } from "./look-repository.js";
import { lookInputOf, lookRpcs } from "./looks.js";
import { avatarStatusFromProto, avatarToProto, voiceToProto } from "./mapping.js";
import * as repo from "./repository.js";
import type { CatalogDatabase } from "./schema.js";

export const VOICE_ENGINES = ["vendorA", "vendorE", "vendorD"] as const;
const NAME_MAX = 64;

/** An avatar is visible to its owner and, when public, to everyone; other spaces see a 404. */
function visibleTo(spaceId: string, row: { space_id: string | null; is_public: boolean }): boolean {
  return row.is_public || (row.space_id !== null && row.space_id === spaceId);
}

export interface CatalogWriteDeps extends AvatarWriteDeps {
  /** As avatarChanged, for a voice an import changed. */
  voiceChanged?: (voiceIds: readonly string[]) => Promise<void>;
}

/**
 * `writes` lets a deleted avatar end its sessions and tells the caches of avatars and voices what
 * changed; without it (tools, tests of reads) deleting an avatar changes only its status.
 */
export function catalogService(
  db: Kysely<CatalogDatabase>,
  writes: CatalogWriteDeps = { log: silentLogger },
): ServiceImpl<typeof CatalogService> {
  async function visibleAvatar(spaceId: string, avatarId: string) {
    const row = isUuid(avatarId) ? await repo.findAvatar(db, avatarId) : undefined;
    if (!row || !visibleTo(spaceId, row)) throw notFound("Avatar not found", { field: "avatar_id" });
    return row;
  }

  async function anyAvatar(avatarId: string) {
    const row = isUuid(avatarId) ? await repo.findAvatar(db, avatarId.toLowerCase()) : undefined;
    if (!row || row.status === "DELETED") throw notFound("Avatar not found", { field: "avatar_id" });
    return row;
  }

  return {
    ...avatarWriteRpcs(db, writes),
    ...lookRpcs(db, visibleAvatar, anyAvatar),

    async listLanguages() {
      return { languages: await repo.listLanguages(db) };
    },

    async listLlmModels() {
      const rows = await repo.listLlmModels(db);
      const byProvider = new Map<string, string[]>();
      for (const r of rows) byProvider.set(r.provider, [...(byProvider.get(r.provider) ?? []), r.model]);
      return create(ListLlmModelsResponseSchema, {
        providers: [...byProvider].map(([provider, models]) => ({ provider, models })),
      });
    },

    async listAvatars(req) {
      const window = pageWindow(req.page);
      // A space id that is not a UUID owns nothing (and must not reach the uuid column).
      if (!isUuid(req.spaceId)) return { avatars: [], page: pageInfo(window, 0) };
      const { rows, count } = await repo.listAvatars(
        db,
        { kind: "space", spaceId: req.spaceId },
        window.offset,
        window.pageSize,
      );
      return { avatars: rows.map((r) => avatarToProto(r)), page: pageInfo(window, count) };
    },

    async listPublicAvatars(req) {
      const window = pageWindow(req.page);
      const { rows, count } = await repo.listAvatars(db, { kind: "public" }, window.offset, window.pageSize);
      return { avatars: rows.map((r) => avatarToProto(r)), page: pageInfo(window, count) };
    },

    async getAvatar(req) {
      return { avatar: avatarToProto(await visibleAvatar(req.spaceId, req.avatarId)) };
    },

    async listVoices(req) {
      const window = pageWindow(req.page);
      // A space id that is not a UUID owns no voices (and must not reach the uuid column).
      const spaceId = isUuid(req.spaceId) ? req.spaceId : undefined;
      if (req.voiceType === VoiceType.PRIVATE && !spaceId) return { voices: [], page: pageInfo(window, 0) };
      const scope: repo.VoiceScope =
        req.voiceType === VoiceType.PUBLIC || !spaceId
          ? { kind: "public" }
          : req.voiceType === VoiceType.PRIVATE
            ? { kind: "private", spaceId }
            : { kind: "visible", spaceId };
      const { rows, count } = await repo.listVoices(db, scope, window.offset, window.pageSize);
      return { voices: rows.map(voiceToProto), page: pageInfo(window, count) };
    },

    async getVoice(req) {
      const row = isUuid(req.voiceId) ? await repo.findVoice(db, req.voiceId) : undefined;
      if (!row || !visibleTo(req.spaceId, row)) throw notFound("Voice not found", { field: "voice_id" });
      return { voice: voiceToProto(row) };
    },

    async importVoices(req) {
      const saved: Voice[] = [];
      await db.transaction().execute(async (trx) => {
        for (const [i, v] of req.voices.entries()) {
          const input = checkVoice(v, i);
          await repo.saveVoice(trx, input, true);
          const row = await repo.findVoice(trx, input.id);
          if (row) saved.push(voiceToProto(row));
        }
      });
      await writes.voiceChanged?.(saved.map((v) => v.id));
      return { voices: saved };
    },

    async importAvatars(req) {
      const saved: Avatar[] = [];
      // Checked before the transaction: an uploaded look is checked in a look worker thread.
      const checked: { input: repo.AvatarInput; look: LookInput | undefined }[] = [];
      for (const [i, a] of req.avatars.entries()) {
        const input = checkAvatar(a, i);
        const look = await lookInputOf(a.lookSource, `avatars[${i}]`);
        if (look?.kind === "invalid") {
          // An avatar whose look cannot be rendered is not ACTIVE (contract section 7).
          if (input.status === "ACTIVE") input.status = "INIT";
          input.error_message = look.error;
        }
        checked.push({ input, look });
      }
      await db.transaction().execute(async (trx) => {
        for (const [i, { input, look }] of checked.entries()) {
          if (input.default_voice_id) {
            const voice = await repo.findVoice(trx, input.default_voice_id);
            if (!voice || !(voice.is_public || voice.space_id === input.space_id)) {
              throw notFound(`avatars[${i}]: default voice ${input.default_voice_id} not found`, {
                field: "default_voice_id",
              });
            }
          }
          await repo.saveAvatar(trx, input, true);
          // Without a look the avatar keeps the one it has (or gets one generated from its id).
          if (look) await saveLook(trx, input.id, look);
          const row = await repo.findAvatar(trx, input.id);
          if (row) saved.push(avatarToProto(row));
        }
      });
      await writes.avatarChanged?.(saved.map((a) => a.id));
      return { avatars: saved };
    },
  };
}

function checkName(name: string, where: string): string {
  const trimmed = name.trim();
  if (trimmed.length === 0 || trimmed.length > NAME_MAX) {
    throw invalidRequest(`${where}: name must have 1 to ${NAME_MAX} characters`, { field: "name" });
  }
  return trimmed;
}

function checkOptionalUuid(value: string, where: string, field: string): string | null {
  if (value === "") return null;
  if (!isUuid(value)) throw invalidRequest(`${where}: ${field} is not a UUID`, { field });
  return value.toLowerCase();
}

function checkVoice(v: Voice, i: number): repo.VoiceInput {
  const where = `voices[${i}]`;
  const unknown = v.voiceEngines.filter((e) => !(VOICE_ENGINES as readonly string[]).includes(e));
  if (unknown.length > 0) {
    throw invalidRequest(`${where}: unknown voice engines ${unknown.join(", ")}`, { field: "voice_engines" });
  }
  const spaceId = checkOptionalUuid(v.spaceId, where, "space_id");
  return {
    id: checkOptionalUuid(v.id, where, "id") ?? randomUUID(),
    space_id: spaceId,
    name: checkName(v.name, where),
    language: v.language,
    gender: v.gender,
    preview_url: v.previewUrl,
    is_public: v.isPublic || spaceId === null,
    voice_engines: v.voiceEngines,
    provider_voice_ids: v.providerVoiceIds,
  };
}

function checkAvatar(a: Avatar, i: number): repo.AvatarInput {
  const where = `avatars[${i}]`;
  const spaceId = checkOptionalUuid(a.spaceId, where, "space_id");
  return {
    id: checkOptionalUuid(a.id, where, "id") ?? randomUUID(),
    space_id: spaceId,
    name: checkName(a.name, where),
    type: a.type || "VIDEO",
    status: avatarStatusFromProto(a.status) ?? "ACTIVE",
    preview_url: a.previewUrl,
    default_voice_id: checkOptionalUuid(a.defaultVoice?.id ?? "", where, "default_voice_id"),
    default_voice_agent_id: checkOptionalUuid(a.defaultVoiceAgentId, where, "default_voice_agent_id"),
    is_1080p: a.is1080p,
    is_public: a.isPublic || spaceId === null,
    sandbox_enabled: a.sandboxEnabled,
    expires_at: null,
    error_message: a.errorMessage,
  };
}
