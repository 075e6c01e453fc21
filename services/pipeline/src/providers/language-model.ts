import {
  ChatCompletionsModel,
  type ChatCompletionsOptions,
  type LanguageModel,
  ProviderError,
} from "@avatar/providers";
import { EgressError } from "@avatar/runtime";
import { Code, ConnectError } from "@connectrpc/connect";
import { accessTo, type Choice } from "./choice.js";
import { redactLanguageModel } from "./redact.js";

export interface ChosenModel {
  model: LanguageModel;
  modelName: string;
}

/** The managed default (interface.md, LLM settings object). */
export const DEFAULT_MANAGED_MODEL = "gpt-5.4-nano";

/**
 * The language model: the session's stored LLM configuration (its base_url, model_name and secret),
 * else the managed vendorB model on this service's endpoint (the space's vendorB key, else the managed
 * key). Sandbox sessions, and services without a vendorB endpoint, use the local endpoint
 * (LOCAL_LLM_URL) when one is configured; otherwise there is none (null).
 */
export async function chooseLanguageModel(choice: Choice): Promise<ChosenModel | null> {
  const { config } = choice;
  if (config.isSandbox) return local(choice, "sandbox");
  if (config.llmConfigurationId) return fromConfiguration(choice, config.llmConfigurationId);

  const access = await accessTo(choice, "VENDORB");
  if (!access) {
    const fallback = local(choice, "no vendorB endpoint or key");
    if (fallback) {
      choice.warn(
        "language_model_substituted",
        "the managed language model is not configured on this service; a local model answers",
      );
    }
    return fallback;
  }
  choice.secrets.add(access.key.value);
  const modelName = config.llmSettings?.model || DEFAULT_MANAGED_MODEL;
  choice.log.info("language model chosen", { provider: "vendorB", model: modelName, key: access.key.source });
  const model = new ChatCompletionsModel({
    baseUrl: access.endpoint.url,
    apiKey: access.key.value,
    name: "vendorB",
    // vendorB's reasoning models take the newer length field.
    maxTokensField: "max_completion_tokens",
  });
  return { model: redactLanguageModel(model, choice.secrets), modelName };
}

async function fromConfiguration(choice: Choice, id: string): Promise<ChosenModel> {
  let stored: Awaited<ReturnType<Choice["clients"]["agents"]["getLlmConfiguration"]>>["llmConfiguration"];
  try {
    stored = (
      await choice.clients.agents.getLlmConfiguration({ spaceId: choice.spaceId, llmConfigurationId: id })
    ).llmConfiguration;
  } catch (err) {
    if (err instanceof ConnectError && err.code === Code.NotFound) {
      throw new ProviderError(
        "llm-configuration",
        `the LLM configuration ${id} no longer exists`,
        "bad_request",
      );
    }
    const message = err instanceof ConnectError ? err.rawMessage : String(err);
    throw new ProviderError("llm-configuration", `cannot read the LLM configuration ${id}: ${message}`);
  }
  if (!stored)
    throw new ProviderError(
      "llm-configuration",
      `the LLM configuration ${id} no longer exists`,
      "bad_request",
    );
  const key = stored.secretId
    ? await choice.keys.named(stored.secretId, "llm-configuration", stored.baseUrl)
    : undefined;
  choice.log.info("language model chosen", {
    provider: "llm-configuration",
    llm_configuration_id: id,
    model: stored.modelName,
    key: key?.source ?? "none",
  });
  // A customer's URL: only through the egress guard (public addresses, or what the operator allowed).
  const model = new ChatCompletionsModel({
    baseUrl: stored.baseUrl,
    apiKey: key?.value,
    name: "llm-configuration",
    fetch: guardedFetch(choice),
  });
  return { model: redactLanguageModel(model, choice.secrets), modelName: stored.modelName };
}

function local(choice: Choice, why: string): ChosenModel | null {
  const endpoint = choice.settings.localLlm;
  if (!endpoint) {
    choice.log.info("language model: none", { why });
    return null;
  }
  choice.log.info("language model chosen", { provider: "local", model: endpoint.model, why });
  return {
    model: new ChatCompletionsModel({ baseUrl: endpoint.url, name: "local-llm" }),
    modelName: endpoint.model,
  };
}

/** The egress guard as the chat-completions client calls fetch; its refusals become ProviderErrors. */
function guardedFetch(choice: Choice): ChatCompletionsOptions["fetch"] {
  return async (url, init) => {
    try {
      return await choice.egress(url, init);
    } catch (err) {
      if (err instanceof EgressError) {
        throw new ProviderError(
          "llm-configuration",
          `llm-configuration: base_url refused: ${err.message}`,
          "bad_request",
        );
      }
      throw err;
    }
  };
}
