import { type Env, env, readConfig } from "@avatar/runtime";
import type { FullModeOptions } from "./full-mode.js";

/** FULL mode's tuning, from the environment (all optional). */
export const fullModeSettingsSpec = {
  /** How far above the background noise a frame must be to count as speech (dB). */
  FULL_VAD_THRESHOLD_DB: env.int({ default: 10, min: 1, max: 40 }),
  /** Frames quieter than this never count as speech (dBFS). */
  FULL_VAD_MIN_SPEECH_DBFS: env.int({ default: -55, min: -90, max: -10 }),
  /** Speech needed before the user counts as speaking (barge-in point). */
  FULL_VAD_START_MS: env.int({ default: 100, min: 10, max: 2000 }),
  /** Silence that ends the user's turn. */
  FULL_VAD_HANGOVER_MS: env.int({ default: 500, min: 100, max: 5000 }),
  /** Conversation messages kept for the language model. */
  FULL_HISTORY_MESSAGES: env.int({ default: 40, min: 2, max: 1000 }),
};

export function readFullModeOptions(source: Env): FullModeOptions {
  const c = readConfig(fullModeSettingsSpec, source);
  return {
    vad: {
      thresholdDb: c.FULL_VAD_THRESHOLD_DB,
      minSpeechLevelDb: c.FULL_VAD_MIN_SPEECH_DBFS,
      startMs: c.FULL_VAD_START_MS,
      hangoverMs: c.FULL_VAD_HANGOVER_MS,
    },
    maxHistory: c.FULL_HISTORY_MESSAGES,
  };
}
