import { createHash } from "node:crypto";
import type { AvatarLook } from "@avatar/contracts/catalog";
import { generateLook } from "../src/look/generate/generate-look.js";

let cached: AvatarLook | undefined;

/** One generated look per test file, drawn small (fast); the renderer scales it like any other. */
export function testLook(): AvatarLook {
  cached ??= generateLook({ seed: "test", presentation: "feminine", hairStyle: "bob" }, 0.5);
  return cached;
}

export const digest = (data: Uint8Array | Int16Array) =>
  createHash("sha256")
    .update(new Uint8Array(data.buffer, data.byteOffset, data.byteLength))
    .digest("hex");

/** `frames` frames of 24 kHz audio: noise at `level` (0..1 of full scale) where `on(frame)`, else silence. */
export function bursts(frames: number, on: (frame: number) => boolean, level = 0.3): Int16Array {
  const pcm = new Int16Array(frames * 960);
  let seed = 12345;
  for (let f = 0; f < frames; f++) {
    if (!on(f)) continue;
    for (let i = 0; i < 960; i++) {
      seed = (seed * 1103515245 + 12345) >>> 0;
      pcm[f * 960 + i] = Math.round(((seed / 2 ** 32) * 2 - 1) * level * 32767);
    }
  }
  return pcm;
}

/** Waits until `check()` holds, polling every 20 ms; throws after `timeoutMs`. */
export async function until(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 20));
  }
}
