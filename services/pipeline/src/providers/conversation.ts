import type { DynamicVariables } from "@avatar/contracts/common";
import {
  type ConversationOptions,
  type ConversationProvider,
  ProviderError,
  VendorAAgent,
  VendorBRealtime,
  VendorCLive,
  VendorDAgent,
} from "@avatar/providers";
import { type Access, accessWithSecret, type Choice } from "./choice.js";
import { redactConversationProvider } from "./redact.js";
import type { ProviderName } from "./settings.js";

export interface ChosenConversation {
  provider: ConversationProvider;
  options: ConversationOptions;
}

/**
 * A LITE session's hosted agent or realtime model, on the key its configuration names. Null when the
 * session brings its own audio (no agent or realtime configuration). A configuration this service has
 * no endpoint for is a ProviderError ("unavailable"), for the session to report.
 */
export async function chooseConversation(choice: Choice): Promise<ChosenConversation | null> {
  const { lite, prompt, language } = choice.config;
  const instructions = prompt || undefined;
  if (lite?.vendorAAgent) {
    const c = lite.vendorAAgent;
    const access = await reach(choice, "VENDORA", c.secretId, "vendorA");
    return chosen(choice, "vendorA agent", new VendorAAgent(common(choice, access)), {
      apiKey: access.key.value,
      agentId: c.agentId,
      voice: c.voiceId || undefined,
      dynamicVariables: plainVariables(c.dynamicVariables ?? choice.config.dynamicVariables),
    });
  }
  if (lite?.vendorDAgent) {
    const c = lite.vendorDAgent;
    const access = await reach(choice, "VENDORD", c.secretId, "vendorD");
    return chosen(choice, "vendorD agent", new VendorDAgent(common(choice, access)), {
      apiKey: access.key.value,
      agentId: c.agentId,
    });
  }
  if (lite?.vendorBRealtime) {
    const c = lite.vendorBRealtime;
    const access = await reach(choice, "VENDORB_REALTIME", c.secretId, "vendorB");
    return chosen(choice, "vendorB realtime", new VendorBRealtime(common(choice, access)), {
      apiKey: access.key.value,
      model: c.model || undefined,
      voice: c.voice || undefined,
      temperature: c.temperature || undefined,
      instructions,
      language: language || undefined,
    });
  }
  if (lite?.vendorCRealtime) {
    const c = lite.vendorCRealtime;
    const access = await reach(choice, "VENDORC", c.secretId, "vendorC");
    return chosen(choice, "vendorC realtime", new VendorCLive(common(choice, access)), {
      apiKey: access.key.value,
      model: c.model || undefined,
      voice: c.voice || undefined,
      temperature: c.temperature,
      instructions,
      language: language || undefined,
    });
  }
  return null;
}

async function reach(
  choice: Choice,
  name: ProviderName,
  secretId: string,
  provider: string,
): Promise<Access> {
  const access = await accessWithSecret(choice, name, secretId, provider);
  if (!access)
    throw new ProviderError(provider, `${provider} is not configured on this service`, "unavailable");
  return access;
}

function common(choice: Choice, access: Access): { baseUrl: string; connectTimeoutMs: number } {
  return { baseUrl: access.endpoint.url, connectTimeoutMs: choice.settings.connectTimeoutMs };
}

function chosen(
  choice: Choice,
  what: string,
  provider: ConversationProvider,
  options: ConversationOptions,
): ChosenConversation {
  choice.log.info("conversation provider chosen", { provider: what });
  return { provider: redactConversationProvider(provider, choice.secrets), options };
}

/** Dynamic variables as plain values (strings, numbers, booleans). */
export function plainVariables(
  variables: DynamicVariables | undefined,
): Record<string, string | number | boolean> | undefined {
  if (!variables) return undefined;
  const out: Record<string, string | number | boolean> = {};
  for (const [name, value] of Object.entries(variables.values)) {
    const kind = value.kind;
    if (kind.case === "stringValue" || kind.case === "numberValue" || kind.case === "boolValue") {
      out[name] = kind.value;
    }
  }
  return Object.keys(out).length > 0 ? out : undefined;
}
