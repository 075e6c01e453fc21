import {
  type ApiKey,
  ApiKeySchema,
  type SigningKey,
  SigningKeySchema,
  type Space,
  SpaceSchema,
} from "@avatar/contracts/tokens";
import { toTimestamp } from "@avatar/runtime";
import { create } from "@bufbuild/protobuf";
import type { ApiKeyRow, SigningKeyRow, SpaceRow } from "./schema.js";
import { tierLimits, tierToProto } from "./tiers.js";

export function spaceToProto(
  row: Pick<SpaceRow, "id" | "name" | "tier" | "max_session_duration" | "created_at">,
): Space {
  return create(SpaceSchema, {
    id: row.id,
    name: row.name,
    tier: tierToProto(row.tier),
    maxSessionDuration: row.max_session_duration ?? tierLimits[row.tier],
    createdAt: toTimestamp(row.created_at),
  });
}

export function apiKeyToProto(row: ApiKeyRow): ApiKey {
  return create(ApiKeySchema, {
    id: row.id,
    spaceId: row.space_id,
    name: row.name,
    prefix: row.prefix,
    createdAt: toTimestamp(row.created_at),
    revokedAt: toTimestamp(row.revoked_at),
  });
}

export function signingKeyToProto(row: SigningKeyRow): SigningKey {
  return create(SigningKeySchema, {
    kid: row.kid,
    alg: row.alg,
    publicJwk: JSON.stringify(row.public_jwk),
    createdAt: toTimestamp(row.created_at),
    current: row.current,
  });
}
