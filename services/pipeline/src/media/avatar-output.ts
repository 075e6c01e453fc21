import type { PhonemeMark } from "@avatar/media";

/**
 * The avatar's voice as its media stream plays it: what a mode pushes, in playout order. Audio plays
 * right after the audio queued before it, or now when nothing is queued: the rule the modes' own playout
 * clocks follow, so the events a client gets and what a viewer sees and hears agree.
 */
export interface AvatarOutput {
  /** Speech, PCM s16le mono at 24 kHz; `phonemes` when the text was synthesized here. */
  speak(pcm: Uint8Array, phonemes?: readonly PhonemeMark[]): void;
  /** The utterance's last audio has been pushed. */
  endUtterance(): void;
  /** Interrupt: everything not yet played is dropped; silence and the mouth at rest from the next frame. */
  interrupt(): void;
}
