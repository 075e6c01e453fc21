import type { PhonemeMark } from "@avatar/media";
import type { AvatarOutput } from "../src/media/avatar-output.js";

export type OutputCall =
  | { kind: "speak"; bytes: number; at: number; phonemes?: readonly PhonemeMark[] }
  | { kind: "end"; at: number }
  | { kind: "interrupt"; at: number };

/** An AvatarOutput that writes down what a mode pushes to the avatar's media, and when. */
export class RecordingOutput implements AvatarOutput {
  readonly calls: OutputCall[] = [];

  constructor(private readonly now: () => number = Date.now) {}

  speak(pcm: Uint8Array, phonemes?: readonly PhonemeMark[]): void {
    this.calls.push({ kind: "speak", bytes: pcm.length, at: this.now(), ...(phonemes ? { phonemes } : {}) });
  }

  endUtterance(): void {
    this.calls.push({ kind: "end", at: this.now() });
  }

  interrupt(): void {
    this.calls.push({ kind: "interrupt", at: this.now() });
  }

  /** Bytes of speech pushed so far. */
  get spokenBytes(): number {
    return this.calls.reduce((n, c) => n + (c.kind === "speak" ? c.bytes : 0), 0);
  }

  /** The calls as short words: `speak:960 end interrupt`. */
  get kinds(): string[] {
    return this.calls.map((c) => (c.kind === "speak" ? `speak:${c.bytes}` : c.kind));
  }
}
