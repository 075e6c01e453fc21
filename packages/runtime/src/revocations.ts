import type { Bus, Subscription } from "@avatar/bus";
import { type ApiKeyRevoked, ApiKeyRevokedSchema } from "@avatar/contracts/tokens";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";

/**
 * API-key revocations on the bus: plain publish/subscribe, so every subscriber (every gateway replica)
 * gets each one. A replica that is disconnected at that moment misses it and relies on its cache's
 * time-to-live instead (API_KEY_CACHE_TTL_MS).
 */
export const API_KEY_REVOKED_SUBJECT = "tokens.api_key_revoked";

export function announceApiKeyRevoked(bus: Bus, key: { apiKeyId: string; spaceId: string }): void {
  bus.publish(API_KEY_REVOKED_SUBJECT, toBinary(ApiKeyRevokedSchema, create(ApiKeyRevokedSchema, key)));
}

export function onApiKeyRevoked(bus: Bus, handler: (revoked: ApiKeyRevoked) => void): Subscription {
  return bus.subscribe(API_KEY_REVOKED_SUBJECT, (msg) => handler(fromBinary(ApiKeyRevokedSchema, msg.data)));
}
