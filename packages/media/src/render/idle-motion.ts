import { FRAME_MS } from "../frames.js";
import type { EyeState } from "../look/visemes.js";
import { seededRandom } from "../random.js";

/**
 * What keeps the avatar alive, as a function of the frame index and a seed: blinks every 2.5 to 6 s
 * (sometimes twice), a slow sway and tilt of the head, breathing, and small nods while speaking. No
 * wall clock: the same seed and frames give the same motion.
 */

export interface Pose {
  /** Head offset in canvas units of "one frame pixel at 720p"; the renderer scales it. */
  headX: number;
  headY: number;
  /** Degrees. */
  tilt: number;
  /** 0..1: how far the chest is raised. */
  breath: number;
  eyes: EyeState;
}

const BLINK: EyeState[] = ["half", "closed", "closed", "half"];

export class IdleMotion {
  private readonly random: () => number;
  private readonly phases: number[];
  private nextBlink: number;
  private blinkFrame = -1;
  private blinkRepeat = false;
  private nod = 0;

  constructor(seed: string) {
    this.random = seededRandom(`idle:${seed}`);
    this.phases = Array.from({ length: 6 }, () => this.random() * 2 * Math.PI);
    this.nextBlink = this.blinkGap();
  }

  /** The pose of frame `index` (called with increasing indexes); `voice` is 0..1 loudness. */
  pose(index: number, voice: number): Pose {
    const t = (index * FRAME_MS) / 1000;
    const p = this.phases;
    const wave = (period: number, phase: number) => Math.sin((2 * Math.PI * t) / period + phase);
    // Nods follow the voice with some inertia.
    this.nod += (voice - this.nod) * 0.25;
    return {
      headX: 3.2 * (0.65 * wave(7.3, p[0] as number) + 0.35 * wave(3.1, p[1] as number)),
      headY: 1.4 * wave(5.7, p[2] as number) + 2.2 * this.nod,
      tilt: 1.3 * (0.7 * wave(6.1, p[3] as number) + 0.3 * wave(2.3, p[4] as number)) + 0.5 * this.nod,
      breath: 0.5 + 0.5 * wave(4.2, p[5] as number),
      eyes: this.eyesAt(index),
    };
  }

  private eyesAt(index: number): EyeState {
    if (this.blinkFrame < 0 && index >= this.nextBlink) this.blinkFrame = index;
    if (this.blinkFrame >= 0) {
      const k = index - this.blinkFrame;
      if (k < BLINK.length) return BLINK[k] as EyeState;
      this.blinkFrame = -1;
      // One blink in six is a double blink.
      this.blinkRepeat = !this.blinkRepeat && this.random() < 1 / 6;
      this.nextBlink = index + (this.blinkRepeat ? 3 : this.blinkGap());
    }
    return "open";
  }

  private blinkGap(): number {
    return Math.round((2500 + this.random() * 3500) / FRAME_MS);
  }
}
