import type { Avatar } from "@avatar/contracts/catalog";
import type { LlmSettings, SessionConfigSchema, SttConfig, VoiceSettings } from "@avatar/contracts/common";
import { type Clients, invalidRequest } from "@avatar/runtime";
import type { AgentsLookup } from "./agents-cache.js";
import { type Variables, variablesProto } from "./dynamic-variables.js";
import type { LanguageCodes } from "./languages.js";
import { lookup } from "./lookup.js";
import type { PlainInit } from "./proto-init.js";
import { resolveContext } from "./resolve-context.js";
import { DEFAULT_LLM_SETTINGS, defaultVoiceSettings, ENGINES, settingsEngine } from "./voice-settings.js";

/** What a FULL conversation is made of, from an avatar persona or a stored managed agent. */
export interface ConversationInput {
  voiceId: string | undefined;
  contextId: string | undefined;
  language: string;
  voiceSettings: VoiceSettings | undefined;
  sttConfig: SttConfig | undefined;
  llmSettings: LlmSettings | undefined;
  llmConfigurationId: string | undefined;
  vars: Variables;
  /** The public field each value came from, for the 400/404 answers. */
  fields: {
    voiceId: string;
    contextId: string;
    language: string;
    /** Where the voice settings' provider and text normalization came from. */
    voiceProvider: string;
    textNormalization: string;
    llmConfigurationId: string;
  };
}

export type ConversationConfig = Pick<
  PlainInit<typeof SessionConfigSchema>,
  | "language"
  | "voiceId"
  | "voiceSettings"
  | "sttConfig"
  | "llmSettings"
  | "llmConfigurationId"
  | "contextId"
  | "prompt"
  | "openingText"
  | "dynamicVariables"
>;

export interface ConversationDeps {
  catalog: Pick<Clients["catalog"], "getVoice">;
  agents: AgentsLookup;
  languages: LanguageCodes;
}

/**
 * Resolves the FULL pipeline's settings: a supported language, the voice (the avatar's default when none
 * is named) and settings its engines can voice (defaults for the first engine it supports when none are
 * given), the LLM (a stored configuration, else the managed model), and the context with its variables.
 */
export async function resolveConversation(
  deps: ConversationDeps,
  spaceId: string,
  avatar: Avatar,
  input: ConversationInput,
): Promise<ConversationConfig> {
  const { fields } = input;
  if (!(await deps.languages.has(input.language))) {
    throw invalidRequest(`language '${input.language}' is not supported (see GET /v1/languages)`, {
      field: fields.language,
    });
  }

  const voiceId = input.voiceId ?? avatar.defaultVoice?.id;
  if (!voiceId) {
    throw invalidRequest(`Avatar ${avatar.id} has no default voice; name one in ${fields.voiceId}`, {
      field: fields.voiceId,
    });
  }
  const voice = await lookup(voiceId, { field: fields.voiceId, message: "Voice not found" }, async () => {
    return (await deps.catalog.getVoice({ spaceId, voiceId })).voice;
  });

  const engine = settingsEngine(input.voiceSettings);
  if (engine && voice.voiceEngines.length > 0 && !voice.voiceEngines.includes(engine)) {
    throw invalidRequest(
      `voice ${voice.id} cannot be voiced by ${engine}; its engines are ${voice.voiceEngines.join(", ")}`,
      { field: fields.voiceProvider },
    );
  }
  if (
    input.voiceSettings?.provider.case === "vendorA" &&
    input.voiceSettings.provider.value.applyLanguageTextNormalization &&
    input.language !== "ja"
  ) {
    throw invalidRequest("apply_language_text_normalization is only valid when the session language is ja", {
      field: fields.textNormalization,
    });
  }
  const defaultEngine = ENGINES.find((e) => voice.voiceEngines.includes(e)) ?? "vendorA";

  if (input.llmConfigurationId !== undefined) {
    const id = input.llmConfigurationId;
    await lookup(
      id,
      { field: fields.llmConfigurationId, message: "LLM configuration not found" },
      async () => {
        return (await deps.agents.getLlmConfiguration({ spaceId, llmConfigurationId: id })).llmConfiguration;
      },
    );
  }

  const context = input.contextId
    ? await resolveContext(deps.agents, spaceId, input.contextId, fields.contextId, input.vars)
    : undefined;

  return {
    language: input.language,
    voiceId: voice.id,
    voiceSettings: input.voiceSettings ?? defaultVoiceSettings(defaultEngine),
    sttConfig: input.sttConfig,
    llmSettings: input.llmSettings?.model ? input.llmSettings : { ...DEFAULT_LLM_SETTINGS },
    llmConfigurationId: input.llmConfigurationId ?? "",
    contextId: context?.contextId ?? "",
    prompt: context?.prompt ?? "",
    openingText: context?.openingText ?? "",
    dynamicVariables: variablesProto(input.vars),
  };
}
