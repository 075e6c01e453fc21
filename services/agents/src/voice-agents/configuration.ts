import {
  type AgentConfiguration,
  AgentConfigurationSchema,
  type ManagedAgentConfiguration,
  type VendorAAgentConfiguration,
  type VendorBAgentConfiguration,
  type VendorDAgentConfiguration,
} from "@avatar/contracts/agents";
import { invalidRequest } from "@avatar/runtime";
import { create } from "@bufbuild/protobuf";
import { checkText } from "../checks.js";
import { limits } from "../limits.js";
import {
  knownLanguage,
  ownLlmConfiguration,
  ownSecret,
  type ResolveDeps,
  readableContext,
  visibleVoice,
} from "../references.js";
import type { AgentTypeValue, SecretTypeValue } from "../schema.js";
import { configurationCase } from "./mapping.js";

/**
 * The configuration of a voice agent, checked against its type: the configuration case must be the
 * type's, required fields present, every id it names resolvable by the caller's space (404 naming the
 * field), secrets of the provider the agent talks to. Provider vocabularies (models, voices, ranges) are
 * validated at the edge; the vendorB defaults are applied here so every caller stores the same thing.
 */

const PREFIX = "agent_configuration";
const field = (name: string) => `${PREFIX}.${name}`;

export const VENDOR_B_DEFAULT_MODEL = "gpt-realtime";
/** The model that runs the full-duplex family; every other model runs the realtime family. */
export const VENDOR_B_FULL_DUPLEX_MODEL = "gpt-live-1";
export const VENDOR_B_DEFAULT_TEMPERATURE = 0.8;

export async function resolveConfiguration(
  deps: ResolveDeps,
  spaceId: string,
  type: AgentTypeValue,
  given: AgentConfiguration | undefined,
): Promise<AgentConfiguration> {
  const expected = configurationCase[type];
  const config = given?.configuration;
  if (!config?.case) {
    // Every field of a managed agent is optional; the other types need their keys and agent ids.
    if (type === "managed_agent")
      return create(AgentConfigurationSchema, { configuration: { case: "managed", value: {} } });
    throw invalidRequest(`agent_configuration is required for agent_type ${type}`, { field: PREFIX });
  }
  if (config.case !== expected) {
    throw invalidRequest(`agent_configuration does not match agent_type ${type}`, { field: PREFIX });
  }
  switch (config.case) {
    case "managed":
      await checkManaged(deps, spaceId, config.value);
      break;
    case "vendorA":
      await checkHosted(deps, spaceId, config.value, "VENDORA_API_KEY");
      if (config.value.voiceId !== undefined)
        checkText(config.value.voiceId, field("voice_id"), 1, limits.agentId);
      break;
    case "vendorD":
      await checkHosted(deps, spaceId, config.value, "VENDORD_API_KEY");
      break;
    case "vendorB":
      await checkVendorB(deps, spaceId, config.value);
      break;
  }
  return create(AgentConfigurationSchema, { configuration: config });
}

async function checkManaged(deps: ResolveDeps, spaceId: string, c: ManagedAgentConfiguration) {
  if (c.voiceId !== undefined)
    c.voiceId = (await visibleVoice(deps.catalog, spaceId, c.voiceId, field("voice_id"))).id;
  if (c.contextId !== undefined) {
    c.contextId = (await readableContext(deps.db, spaceId, c.contextId, field("context_id"))).id;
  }
  if (c.llmConfigurationId !== undefined) {
    c.llmConfigurationId = (
      await ownLlmConfiguration(deps.db, spaceId, c.llmConfigurationId, field("llm_configuration_id"))
    ).id;
  }
  if (c.language !== undefined && !(await knownLanguage(deps.catalog, c.language))) {
    throw invalidRequest(`${field("language")} is not a supported language`, { field: field("language") });
  }
  if (c.voiceSettings && !c.voiceSettings.provider.case) {
    throw invalidRequest(`${field("voice_settings")} needs a provider`, { field: field("voice_settings") });
  }
  if (c.sttConfig && !c.sttConfig.provider) {
    throw invalidRequest(`${field("stt_config.provider")} is required`, {
      field: field("stt_config.provider"),
    });
  }
}

/** vendorA and vendorD agents: hosted by the provider, reached with the space's key of that provider. */
async function checkHosted(
  deps: ResolveDeps,
  spaceId: string,
  c: VendorAAgentConfiguration | VendorDAgentConfiguration,
  secretType: SecretTypeValue,
) {
  checkText(c.agentId, field("agent_id"), 1, limits.agentId);
  c.secretId = await providerSecret(deps, spaceId, c.secretId, secretType);
}

async function checkVendorB(deps: ResolveDeps, spaceId: string, c: VendorBAgentConfiguration) {
  c.secretId = await providerSecret(deps, spaceId, c.secretId, "VENDORB_API_KEY");
  if (c.contextId !== undefined) {
    c.contextId = (await readableContext(deps.db, spaceId, c.contextId, field("context_id"))).id;
  }
  c.model ||= VENDOR_B_DEFAULT_MODEL;
  const fullDuplex = c.model === VENDOR_B_FULL_DUPLEX_MODEL;
  c.voice ||= fullDuplex ? "marin" : "alloy";
  // Temperature applies to the realtime family only.
  c.temperature = fullDuplex ? 0 : c.temperature || VENDOR_B_DEFAULT_TEMPERATURE;
}

async function providerSecret(
  deps: ResolveDeps,
  spaceId: string,
  secretId: string,
  secretType: SecretTypeValue,
): Promise<string> {
  const name = field("secret_id");
  if (secretId === "") throw invalidRequest(`${name} is required`, { field: name });
  const secret = await ownSecret(deps.db, spaceId, secretId, name);
  if (secret.secret_type !== secretType) {
    throw invalidRequest(`${name} must be a secret of type ${secretType}`, { field: name });
  }
  return secret.id;
}
