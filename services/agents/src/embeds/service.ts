import { randomUUID } from "node:crypto";
import { type AgentsService, EmbedOrientation } from "@avatar/contracts/agents";
import { streamSettings } from "@avatar/media/video-settings";
import {
  EMBED_BOUNDS,
  EMBED_DEFAULTS,
  embedOriginProblem,
  invalidRequest,
  isUuid,
  normalizeEmbedOrigin,
} from "@avatar/runtime";
import type { ServiceImpl } from "@connectrpc/connect";
import { type Changed, unannounced } from "../changes.js";
import { missingResource } from "../checks.js";
import {
  knownLanguage,
  type ResolveDeps,
  readableContext,
  readableVoiceAgent,
  visibleAvatar,
  visibleVoice,
} from "../references.js";
import { embedToProto } from "./mapping.js";
import * as repo from "./repository.js";

type EmbedRpcs = Pick<ServiceImpl<typeof AgentsService>, "createEmbed" | "getEmbed" | "updateEmbed">;

/** A limit within its bounds (400 naming the field otherwise). */
function checkLimit(value: number, field: string, bounds: { min: number; max: number }): number {
  if (!Number.isInteger(value) || value < bounds.min || value > bounds.max) {
    throw invalidRequest(`${field} must be an integer from ${bounds.min} to ${bounds.max}`, { field });
  }
  return value;
}

/** Allowed origins: each `*` or an http(s) origin, at most EMBED_BOUNDS.allowedOrigins, normalised. */
function checkOrigins(origins: readonly string[]): string[] {
  if (origins.length > EMBED_BOUNDS.allowedOrigins) {
    throw invalidRequest(`allowed_origins takes at most ${EMBED_BOUNDS.allowedOrigins} origins`, {
      field: "allowed_origins",
    });
  }
  for (const origin of origins) {
    const problem = embedOriginProblem(origin);
    if (problem) throw invalidRequest(`allowed_origins: each entry ${problem}`, { field: "allowed_origins" });
  }
  return [...new Set(origins.map(normalizeEmbedOrigin))];
}

/**
 * An embed is a stored session recipe behind a web page anyone may open: an avatar with either a voice
 * agent or a voice and context. The page (served by the gateway) starts sessions with it.
 */
export function embedRpcs(deps: ResolveDeps, changed: Changed = unannounced): EmbedRpcs {
  const { db, catalog } = deps;
  return {
    async createEmbed(req) {
      if (req.voiceAgentId !== undefined && (req.voiceId !== undefined || req.contextId !== undefined)) {
        throw invalidRequest("voice_agent_id cannot be combined with voice_id or context_id", {
          field: "voice_agent_id",
        });
      }
      if (req.maxSessionDuration !== undefined && req.maxSessionDuration <= 0) {
        throw invalidRequest("max_session_duration must be positive", { field: "max_session_duration" });
      }
      const avatar = await visibleAvatar(catalog, req.spaceId, req.avatarId, "avatar_id");
      if (req.isSandbox && !avatar.sandboxEnabled) {
        throw invalidRequest("is_sandbox needs a sandbox-enabled avatar", { field: "is_sandbox" });
      }
      const video = streamSettings(req.videoSettings);
      if (video.quality === "very_high" && !avatar.is1080p) {
        throw invalidRequest("video quality very_high needs a 1080p avatar", { field: "video_settings" });
      }
      const voiceAgent =
        req.voiceAgentId !== undefined
          ? await readableVoiceAgent(db, req.spaceId, req.voiceAgentId, "voice_agent_id")
          : undefined;
      const voice =
        req.voiceId !== undefined
          ? await visibleVoice(catalog, req.spaceId, req.voiceId, "voice_id")
          : undefined;
      const context =
        req.contextId !== undefined
          ? await readableContext(db, req.spaceId, req.contextId, "context_id")
          : undefined;
      if (req.defaultLanguage !== undefined && !(await knownLanguage(catalog, req.defaultLanguage))) {
        throw invalidRequest("default_language is not a supported language", { field: "default_language" });
      }
      const row = await repo.insertEmbed(db, {
        id: randomUUID(),
        space_id: req.spaceId,
        avatar_id: avatar.id,
        voice_agent_id: voiceAgent?.id ?? null,
        voice_id: voice?.id ?? null,
        context_id: context?.id ?? null,
        orientation: req.orientation === EmbedOrientation.VERTICAL ? "vertical" : "horizontal",
        max_session_duration: req.maxSessionDuration ?? null,
        default_language: req.defaultLanguage ?? null,
        is_sandbox: req.isSandbox,
        video_quality: video.quality,
        video_encoding: video.codec,
        max_concurrent_sessions: checkLimit(
          req.maxConcurrentSessions ?? EMBED_DEFAULTS.maxConcurrentSessions,
          "max_concurrent_sessions",
          EMBED_BOUNDS.maxConcurrentSessions,
        ),
        max_sessions_per_hour: checkLimit(
          req.maxSessionsPerHour ?? EMBED_DEFAULTS.maxSessionsPerHour,
          "max_sessions_per_hour",
          EMBED_BOUNDS.maxSessionsPerHour,
        ),
        allowed_origins: checkOrigins(req.allowedOrigins),
        is_disabled: false,
      });
      return { embed: embedToProto(row) };
    },

    async updateEmbed(req) {
      const id = isUuid(req.embedId) ? req.embedId.toLowerCase() : undefined;
      const current = id ? await repo.findEmbed(db, id) : undefined;
      if (!current || current.space_id !== req.spaceId) throw missingResource("Embed", "embed_id");
      const changes: repo.EmbedChanges = {};
      if (req.maxConcurrentSessions !== undefined) {
        changes.max_concurrent_sessions = checkLimit(
          req.maxConcurrentSessions,
          "max_concurrent_sessions",
          EMBED_BOUNDS.maxConcurrentSessions,
        );
      }
      if (req.maxSessionsPerHour !== undefined) {
        changes.max_sessions_per_hour = checkLimit(
          req.maxSessionsPerHour,
          "max_sessions_per_hour",
          EMBED_BOUNDS.maxSessionsPerHour,
        );
      }
      if (req.allowedOrigins) changes.allowed_origins = checkOrigins(req.allowedOrigins.origins);
      if (req.isDisabled !== undefined) changes.is_disabled = req.isDisabled;
      const row = await repo.updateEmbed(db, req.spaceId, current.id, changes);
      if (!row) throw missingResource("Embed", "embed_id");
      await changed(row.id);
      return { embed: embedToProto(row) };
    },

    async getEmbed(req) {
      const row = isUuid(req.embedId) ? await repo.findEmbed(db, req.embedId.toLowerCase()) : undefined;
      if (!row) throw missingResource("Embed", "embed_id");
      return { embed: embedToProto(row) };
    },
  };
}
