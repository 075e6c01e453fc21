/**
 * What vendorB's realtime protocol needs at the start of a session: the model families and the
 * `session.update` event that configures audio formats, voice, instructions, server-side turn detection
 * and transcription of the user's speech.
 */
import { type ConversationOptions, SESSION_SAMPLE_RATE } from "../types.js";

export const VENDOR_B_DEFAULT_MODEL = "gpt-realtime";
export const VENDOR_B_DEFAULT_TRANSCRIPTION_MODEL = "gpt-4o-mini-transcribe";

/** gpt-live-1 runs the full-duplex family; every other model runs the realtime family. */
export type VendorBFamily = "realtime" | "full-duplex";

export function vendorBFamily(model: string): VendorBFamily {
  return model.startsWith("gpt-live") ? "full-duplex" : "realtime";
}

export function vendorBDefaultVoice(family: VendorBFamily): string {
  return family === "full-duplex" ? "marin" : "alloy";
}

/** PCM 16-bit mono at 24 kHz, the only PCM rate the protocol takes, which is also the session's rate. */
const PCM_FORMAT = { type: "audio/pcm", rate: SESSION_SAMPLE_RATE } as const;

export function vendorBSessionUpdate(options: ConversationOptions, transcriptionModel: string): object {
  const model = options.model ?? VENDOR_B_DEFAULT_MODEL;
  const family = vendorBFamily(model);
  const transcription: Record<string, string> = { model: transcriptionModel };
  // The transcription language is an ISO-639-1 code: "en-US" -> "en".
  const language = options.language?.split(/[-_]/)[0]?.toLowerCase();
  if (language) transcription.language = language;
  const session: Record<string, unknown> = {
    type: "realtime",
    output_modalities: ["audio"],
    audio: {
      input: {
        format: PCM_FORMAT,
        transcription,
        turn_detection: { type: "server_vad", create_response: true, interrupt_response: true },
      },
      output: { format: PCM_FORMAT, voice: options.voice ?? vendorBDefaultVoice(family) },
    },
  };
  if (options.instructions) session.instructions = options.instructions;
  // Only the realtime family takes a sampling temperature (0.6 to 1.2).
  if (family === "realtime" && options.temperature !== undefined) session.temperature = options.temperature;
  return { type: "session.update", session };
}
