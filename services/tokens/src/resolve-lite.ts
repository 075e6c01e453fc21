import { SecretType } from "@avatar/contracts/agents";
import type { LiteConfigs } from "@avatar/contracts/common";
import { invalidRequest } from "@avatar/runtime";
import type { AgentsLookup } from "./agents-cache.js";
import { givenId, lookup } from "./lookup.js";

const secretTypeNames: Record<SecretType, string> = {
  [SecretType.UNSPECIFIED]: "unspecified",
  [SecretType.VENDORA_API_KEY]: "VENDORA_API_KEY",
  [SecretType.VENDORB_API_KEY]: "VENDORB_API_KEY",
  [SecretType.VENDORC_API_KEY]: "VENDORC_API_KEY",
  [SecretType.VENDORD_API_KEY]: "VENDORD_API_KEY",
  [SecretType.VENDORE_API_KEY]: "VENDORE_API_KEY",
};

/** The space's own secret of the provider the configuration runs (404 when unknown, 400 for another type). */
export async function checkSecret(
  agents: AgentsLookup,
  spaceId: string,
  secretId: string,
  expected: SecretType,
  field: string,
): Promise<void> {
  const secret = await lookup(secretId, { field, message: "Secret not found" }, async () => {
    return (await agents.getSecret({ spaceId, secretId })).secret;
  });
  if (secret.secretType !== expected) {
    throw invalidRequest(
      `${field} must name a ${secretTypeNames[expected]} secret; ${secretId} is a ${secretTypeNames[secret.secretType]} secret`,
      { field },
    );
  }
}

/** The LITE agent configuration's secret, and the context of a realtime configuration (with its field). */
export async function checkLiteConfigs(
  agents: AgentsLookup,
  spaceId: string,
  lite: LiteConfigs | undefined,
): Promise<{ contextId: string; field: string } | undefined> {
  if (lite?.vendorAAgent) {
    await checkSecret(
      agents,
      spaceId,
      lite.vendorAAgent.secretId,
      SecretType.VENDORA_API_KEY,
      "vendorA_agent_config.secret_id",
    );
  }
  if (lite?.vendorDAgent) {
    await checkSecret(
      agents,
      spaceId,
      lite.vendorDAgent.secretId,
      SecretType.VENDORD_API_KEY,
      "vendorD_agent_config.secret_id",
    );
  }
  if (lite?.vendorBRealtime) {
    const c = lite.vendorBRealtime;
    await checkSecret(
      agents,
      spaceId,
      c.secretId,
      SecretType.VENDORB_API_KEY,
      "vendorB_realtime_config.secret_id",
    );
    const contextId = givenId(c.contextId);
    if (contextId) return { contextId, field: "vendorB_realtime_config.context_id" };
  }
  if (lite?.vendorCRealtime) {
    const c = lite.vendorCRealtime;
    await checkSecret(
      agents,
      spaceId,
      c.secretId,
      SecretType.VENDORC_API_KEY,
      "vendorC_realtime_config.secret_id",
    );
    const contextId = givenId(c.contextId);
    if (contextId) return { contextId, field: "vendorC_realtime_config.context_id" };
  }
  return undefined;
}
