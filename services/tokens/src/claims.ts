import { type SessionConfig, SessionConfigSchema } from "@avatar/contracts/common";
import type { SessionTokenClaims, StartSessionData } from "@avatar/runtime";
import { type JsonObject, toJson } from "@bufbuild/protobuf";
import { agentTypeName, encodingName, interactivityName, modeName, qualityName } from "./wire-names.js";

export type UnsignedClaims = Omit<SessionTokenClaims, "iss" | "aud" | "iat">;

/**
 * The resolved configuration for a sandbox token: everything the session runs with, by id, except the
 * caller's transport credentials. Secret values are never part of a SessionConfig in the first place.
 */
export function sandboxView(config: SessionConfig): Record<string, unknown> {
  const json = toJson(SessionConfigSchema, config, { useProtoFieldName: true }) as JsonObject;
  const lite = json.lite as JsonObject | undefined;
  const a = lite?.transport_a as JsonObject | undefined;
  const b = lite?.transport_b as JsonObject | undefined;
  if (a) delete a.transport_a_client_token;
  if (b) delete b.transport_b_token;
  return json;
}

/**
 * The claims of a session token (contract section 2): only non-sensitive configuration in
 * start_session_data; a sandbox token adds the resolved configuration.
 */
export function sessionClaims(args: {
  sessionId: string;
  spaceId: string;
  apiKeyId: string;
  config: SessionConfig;
  expiresAt: number;
}): UnsignedClaims {
  const { config } = args;
  const data: StartSessionData = {
    mode: modeName(config.mode),
    avatar_id: config.avatarId,
    is_sandbox: config.isSandbox,
    video_settings: {
      quality: qualityName(config.videoSettings?.quality ?? 0),
      encoding: encodingName(config.videoSettings?.encoding ?? 0),
    },
    interactivity_type: interactivityName(config.interactivityType),
    agent_type: agentTypeName(config.agentType),
  };
  if (config.isSandbox) data.resolved = sandboxView(config);
  return {
    sub: args.sessionId,
    space_id: args.spaceId,
    api_key_id: args.apiKeyId,
    exp: args.expiresAt,
    start_session_data: data,
  };
}
