import type { AvFrame } from "./frames.js";

/**
 * The renderer's seam, modelled on the avatar "video generator" of LiveKit Agents: the avatar's voice
 * goes in, paired video and audio frames come out at VIDEO_FPS, idle frames (blinks, small head and
 * breathing motion, mouth at rest) whenever nothing is spoken.
 *
 * Audio plays in the order pushed: a chunk starts right after the audio queued before it, or now when
 * nothing is queued (the same rule the session's playout clocks follow, so events and media agree).
 * Implementations: the CPU portrait renderer in this package; a GPU renderer in another process would
 * implement it as a client that sends the calls and receives the frames.
 */
export interface AvatarVideoGenerator {
  /**
   * The avatar's speech: PCM s16 mono at 24 kHz (the session rate). `phonemes`, when the text was
   * synthesized here, gives what is said when (ms from the chunk's start), so the mouth follows the text
   * as well as the audio.
   */
  pushAudio(pcm: Int16Array, timing?: { phonemes?: PhonemeMark[] }): void;
  /** The utterance's last audio has been pushed (LiveKit's AudioSegmentEnd). */
  flush(): void;
  /** Interrupt: drops every queued sample; from the next frame on, silence and the mouth at rest. */
  clearBuffer(): void;
  /** Frames from now on, paced in real time; ends when the signal aborts or the generator closes. */
  frames(signal?: AbortSignal): AsyncIterable<AvFrame>;
  close(): void;
}

/** A phoneme of synthesized speech: its symbol (eSpeak's) and when it starts, ms from the chunk's start. */
export interface PhonemeMark {
  phoneme: string;
  startMs: number;
  durationMs: number;
}
