/**
 * The small interfaces the pipeline talks to, one per kind of provider. Every real client speaks its
 * vendor's wire protocol; local implementations (named Local*) serve sandbox sessions and offline use.
 *
 * Audio everywhere is PCM, signed 16-bit little-endian, mono. The session's audio (client <-> pipeline)
 * is 24 kHz; a provider needing another rate resamples inside its client.
 */

export const SESSION_SAMPLE_RATE = 24_000;

/** A provider failure the session reports as a `warning` or `error` event and survives. */
export class ProviderError extends Error {
  constructor(
    readonly provider: string,
    message: string,
    /** "rate_limited" for HTTP 429 / quota answers, "unauthorized" for bad keys, "unavailable" otherwise. */
    readonly kind: "rate_limited" | "unauthorized" | "bad_request" | "unavailable" = "unavailable",
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "ProviderError";
  }
}

// ---------- language model ----------

export interface ChatMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  temperature?: number;
  maxTokens?: number;
}

export interface LanguageModel {
  readonly name: string;
  /** Streams the answer's text as it is generated. Aborting the signal stops the request. */
  stream(request: ChatRequest, signal?: AbortSignal): AsyncIterable<string>;
}

// ---------- speech synthesis ----------

export interface SynthesisRequest {
  text: string;
  /** The provider's own voice id (the catalog's provider_voice_ids[engine]). */
  voiceId: string;
  /** Provider-specific settings, already validated (the public voice_settings variant). */
  settings: Record<string, unknown>;
  language?: string;
}

export interface SpeechSynthesizer {
  readonly name: string;
  /** PCM chunks at SESSION_SAMPLE_RATE, as they arrive. Aborting the signal stops synthesis. */
  synthesize(request: SynthesisRequest, signal?: AbortSignal): AsyncIterable<Uint8Array>;
  /** As `synthesize`, with what is said when in each chunk, where the synthesizer knows it. */
  synthesizeTimed?(request: SynthesisRequest, signal?: AbortSignal): AsyncIterable<TimedSpeech>;
}

/** A phoneme of synthesized speech: its name (eSpeak's IPA) and when it sounds, ms from the chunk's start. */
export interface SpokenPhoneme {
  phoneme: string;
  startMs: number;
  durationMs: number;
}

/** A chunk of synthesized speech with its phoneme timing. */
export interface TimedSpeech {
  /** PCM s16le at SESSION_SAMPLE_RATE, as `synthesize` yields. */
  pcm: Uint8Array;
  /** In order, covering the chunk; an empty name is a pause. */
  phonemes: SpokenPhoneme[];
}

/** A synthesizer's speech with its phoneme timing where it has one, else the audio alone. */
export async function* speechOf(
  synthesizer: SpeechSynthesizer,
  request: SynthesisRequest,
  signal?: AbortSignal,
): AsyncGenerator<{ pcm: Uint8Array; phonemes?: SpokenPhoneme[] }> {
  if (synthesizer.synthesizeTimed) {
    yield* synthesizer.synthesizeTimed(request, signal);
    return;
  }
  for await (const pcm of synthesizer.synthesize(request, signal)) yield { pcm };
}

// ---------- speech recognition ----------

export type RecognitionEvent =
  | { type: "partial"; text: string }
  | { type: "final"; text: string }
  /** The provider detected the end of the speaker's turn (when it does endpointing itself). */
  | { type: "end_of_turn" }
  | { type: "error"; error: ProviderError };

export interface RecognitionStream {
  /** PCM at SESSION_SAMPLE_RATE. */
  write(pcm: Uint8Array): void;
  /** No more audio; results still arrive until `events` ends. */
  end(): void;
  close(): void;
  readonly events: AsyncIterable<RecognitionEvent>;
}

export interface SpeechRecognizer {
  readonly name: string;
  open(options: { language: string }, signal?: AbortSignal): Promise<RecognitionStream>;
}

// ---------- realtime models and hosted agents (speech in, speech out) ----------

export type ConversationEvent =
  | { type: "audio"; pcm: Uint8Array }
  | { type: "user_transcript"; text: string; final: boolean }
  | { type: "agent_transcript"; text: string; final: boolean }
  /** The user started speaking over the agent: stop playing what was queued. */
  | { type: "interrupted" }
  | { type: "turn_done" }
  /** A raw provider event, forwarded as-is (vendorA agent: `vendorA_agent_event`). */
  | { type: "raw"; eventType: string; data: unknown }
  /** The agent ended the conversation (vendorA agent: AGENT_HANG_UP). */
  | { type: "hang_up" }
  | { type: "error"; error: ProviderError };

export interface Conversation {
  /** The user's audio, PCM at SESSION_SAMPLE_RATE. */
  sendAudio(pcm: Uint8Array): void;
  /** Asks for a spoken answer to text (FULL avatar.say on a realtime model). */
  sendText?(text: string): void;
  /** Passes a raw client command through (vendorA agent: `vendorA_agent_command`). */
  sendRaw?(eventType: string, data: unknown): void;
  interrupt(): void;
  close(): void;
  readonly events: AsyncIterable<ConversationEvent>;
}

export interface ConversationOptions {
  apiKey: string;
  /** System instructions (context prompt) where the provider takes them. */
  instructions?: string;
  voice?: string;
  model?: string;
  temperature?: number;
  language?: string;
  /** vendorA/vendorD hosted agents. */
  agentId?: string;
  dynamicVariables?: Record<string, string | number | boolean>;
}

export interface ConversationProvider {
  readonly name: string;
  connect(options: ConversationOptions, signal?: AbortSignal): Promise<Conversation>;
}
