import type {
  ConversationOptions,
  ConversationProvider,
  LanguageModel,
  SpeechRecognizer,
  SpeechSynthesizer,
} from "@avatar/providers";
import type { SessionContext } from "../realtime/mode.js";

/**
 * The providers one session runs with, chosen from its SessionConfig, the space's secrets (revealed
 * through the agents service, never logged), the service's own managed keys and endpoints (env), and the
 * local implementations for sandbox/offline use. Built by providers/registry.ts.
 */
export interface SessionProviders {
  /** The avatar's voice: synthesizer plus the provider's voice id and the session's voice settings. */
  synthesizer(): Promise<{
    synthesizer: SpeechSynthesizer;
    voiceId: string;
    settings: Record<string, unknown>;
  }>;
  /** Speech recognition, or null when none can run (the session warns once and goes on). */
  recognizer(): Promise<SpeechRecognizer | null>;
  /** The language model and model name, or null when none can run. */
  languageModel(): Promise<{ model: LanguageModel; modelName: string } | null>;
  /** A LITE session's hosted agent or realtime model (vendorA/vendorD agent, vendorB/vendorC realtime), or null. */
  conversation(): Promise<{ provider: ConversationProvider; options: ConversationOptions } | null>;
}

export type SessionProvidersFactory = (ctx: SessionContext) => SessionProviders;
