import { type ConfigOf, type Env, env, readConfig } from "@avatar/runtime";

/** The memory service's settings (environment). */
export const memoryConfigSpec = {
  /**
   * Display name of the LLM configuration a space's summaries use; when the space has none of that
   * name (or this is unset) its first listed configuration is used.
   */
  MEMORY_LLM_CONFIGURATION_NAME: env.optionalString(),
  /** How long one chat-completions call for a summary may take before the extractive summary is used. */
  MEMORY_LLM_TIMEOUT_MS: env.int({ default: 20_000, min: 100, max: 300_000 }),
  /** Upper bound of the rolled-up memory_content; the oldest episodes are left out beyond it. */
  MEMORY_CONTENT_MAX_CHARS: env.int({ default: 8_000, min: 500, max: 1_000_000 }),
};

export type MemoryConfig = ConfigOf<typeof memoryConfigSpec>;

export const readMemoryConfig = (source: Env): MemoryConfig => readConfig(memoryConfigSpec, source);
