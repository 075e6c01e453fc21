import { randomUUID } from "node:crypto";
import type { Bus } from "@avatar/bus";
import { Tier, type TokensService } from "@avatar/contracts/tokens";
import { announceApiKeyRevoked, invalidRequest, isUuid, notFound, unauthenticated } from "@avatar/runtime";
import type { ServiceImpl } from "@connectrpc/connect";
import { Code, ConnectError } from "@connectrpc/connect";
import type { Kysely } from "kysely";
import { displayPrefix, generateApiKey, hashApiKey, isAcceptableApiKey } from "./api-key-secret.js";
import { apiKeyToProto, signingKeyToProto, spaceToProto } from "./mapping.js";
import * as repo from "./repository.js";
import type { TokensDatabase } from "./schema.js";
import type { SessionTokenSigner } from "./signing-keys.js";
import type { SpaceLookup } from "./space-cache.js";
import { tierFromProto } from "./tiers.js";
import { verifyWithDatabaseKeys } from "./verify.js";

const NAME_MAX = 128;

function checkName(name: string, field: string): string {
  const trimmed = name.trim();
  if (!trimmed || trimmed.length > NAME_MAX)
    throw invalidRequest(`${field} must have 1 to ${NAME_MAX} characters`, { field });
  return trimmed;
}

function checkDuration(seconds: number | undefined): number | null {
  if (seconds === undefined) return null;
  if (!Number.isInteger(seconds) || seconds <= 0) {
    throw invalidRequest("max_session_duration must be a positive number of seconds", {
      field: "max_session_duration",
    });
  }
  return seconds;
}

function isUniqueViolation(err: unknown): boolean {
  return typeof err === "object" && err !== null && (err as { code?: string }).code === "23505";
}

/** Spaces, API keys and signing keys. Minting session tokens lives in mint.ts. */
export function tokensAdminService(
  db: Kysely<TokensDatabase>,
  signer: SessionTokenSigner,
  spaces: Pick<SpaceLookup, "changed">,
  bus: Bus,
): Partial<ServiceImpl<typeof TokensService>> {
  async function requireSpace(spaceId: string) {
    const space = isUuid(spaceId) ? await repo.findSpace(db, spaceId) : undefined;
    if (!space) throw notFound("Space not found", { field: "space_id" });
    return space;
  }

  return {
    async createSpace(req) {
      const tier = req.tier === Tier.UNSPECIFIED ? "free" : tierFromProto(req.tier);
      if (!tier) throw invalidRequest("unknown tier", { field: "tier" });
      if (req.id && !isUuid(req.id)) throw invalidRequest("id must be a UUID", { field: "id" });
      if (req.apiKey && !isAcceptableApiKey(req.apiKey)) {
        throw invalidRequest("api_key must be 24 to 200 characters of letters, digits, '_', '-' or '.'", {
          field: "api_key",
        });
      }
      const secret = req.apiKey || generateApiKey();
      try {
        return await db.transaction().execute(async (trx) => {
          const space = await repo.insertSpace(trx, {
            id: req.id || randomUUID(),
            name: checkName(req.name, "name"),
            tier,
            max_session_duration: checkDuration(req.maxSessionDuration),
          });
          const key = await repo.insertApiKey(trx, {
            id: randomUUID(),
            space_id: space.id,
            name: "default",
            prefix: displayPrefix(secret),
            key_hash: hashApiKey(secret),
          });
          return { space: spaceToProto(space), apiKey: apiKeyToProto(key), apiKeySecret: secret };
        });
      } catch (err) {
        if (isUniqueViolation(err))
          throw new ConnectError("space or API key already exists", Code.AlreadyExists);
        throw err;
      }
    },

    async getSpace(req) {
      return { space: spaceToProto(await requireSpace(req.spaceId)) };
    },

    async listSpaces() {
      return { spaces: (await repo.listSpaces(db)).map(spaceToProto) };
    },

    async updateSpace(req) {
      const space = await requireSpace(req.spaceId);
      const changes: Parameters<typeof repo.updateSpace>[2] = {};
      if (req.name !== undefined) changes.name = checkName(req.name, "name");
      if (req.tier !== undefined) {
        const tier = tierFromProto(req.tier);
        if (!tier) throw invalidRequest("unknown tier", { field: "tier" });
        changes.tier = tier;
      }
      if (req.maxSessionDuration !== undefined) {
        // 0 clears the override: the tier's limit applies again.
        changes.max_session_duration =
          req.maxSessionDuration === 0 ? null : checkDuration(req.maxSessionDuration);
      }
      // An UPDATE without columns is not valid SQL: with nothing to change, the space is returned as it is.
      const row = Object.keys(changes).length > 0 ? await repo.updateSpace(db, req.spaceId, changes) : space;
      if (!row) throw notFound("Space not found", { field: "space_id" });
      spaces.changed(row.id);
      return { space: spaceToProto(row) };
    },

    async createApiKey(req) {
      await requireSpace(req.spaceId);
      if (req.apiKey && !isAcceptableApiKey(req.apiKey)) {
        throw invalidRequest("api_key must be 24 to 200 characters of letters, digits, '_', '-' or '.'", {
          field: "api_key",
        });
      }
      const secret = req.apiKey || generateApiKey();
      try {
        const key = await repo.insertApiKey(db, {
          id: randomUUID(),
          space_id: req.spaceId,
          name: req.name.trim() ? checkName(req.name, "name") : "key",
          prefix: displayPrefix(secret),
          key_hash: hashApiKey(secret),
        });
        return { apiKey: apiKeyToProto(key), apiKeySecret: secret };
      } catch (err) {
        if (isUniqueViolation(err)) throw new ConnectError("API key already exists", Code.AlreadyExists);
        throw err;
      }
    },

    async listApiKeys(req) {
      await requireSpace(req.spaceId);
      return { apiKeys: (await repo.listApiKeys(db, req.spaceId)).map(apiKeyToProto) };
    },

    async revokeApiKey(req) {
      const row = isUuid(req.apiKeyId) ? await repo.revokeApiKey(db, req.apiKeyId) : undefined;
      if (!row) throw notFound("API key not found", { field: "api_key_id" });
      // Gateways drop the key from their caches when they hear this (also when it was revoked before).
      announceApiKeyRevoked(bus, { apiKeyId: row.id, spaceId: row.space_id });
      return { apiKey: apiKeyToProto(row) };
    },

    async getApiKey(req) {
      const row = isUuid(req.apiKeyId) ? await repo.findApiKey(db, req.apiKeyId) : undefined;
      if (!row) throw notFound("API key not found", { field: "api_key_id" });
      return { apiKey: apiKeyToProto(row) };
    },

    async authenticateApiKey(req) {
      const row = req.apiKey ? await repo.findActiveKeyByHash(db, hashApiKey(req.apiKey)) : undefined;
      if (!row) throw unauthenticated("Not authenticated");
      return {
        apiKey: apiKeyToProto(row),
        space: spaceToProto({
          id: row.space_id,
          name: row.space_name,
          tier: row.tier,
          max_session_duration: row.max_session_duration,
          created_at: row.space_created_at,
        }),
      };
    },

    async getSigningKeys() {
      await signer.ensureKey();
      return { keys: (await signer.verifyingKeys()).map(signingKeyToProto) };
    },

    async rotateSigningKey() {
      return { key: signingKeyToProto(await signer.rotate()) };
    },

    async verifySessionToken(req) {
      const claims = await verifyWithDatabaseKeys(signer, req.sessionToken);
      if (!claims) throw unauthenticated("invalid session token");
      return { claims };
    },
  };
}
