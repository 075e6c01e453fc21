/**
 * What each process's `node` runs with, wherever it runs: the manifests (deploy/base, checked by
 * deploy/test), the image's CMD and CI's image step, the processes tests and benchmarks spawn
 * (@avatar/testkit), `pnpm start`.
 *
 * A larger initial old space. V8 counts the memory of ArrayBuffers (socket reads, ws frames, bus
 * messages, HTTP bodies) towards the limit that starts a full mark-compact, and at its default a gateway
 * relaying 1,000 LITE sessions (a 64 KiB chunk a second each) ran one every ~70 ms with a 25 MB heap:
 * 236 in a run, a quarter of its CPU in GC. With 128 MB: 44; gateway CPU 44-48 % -> 22 %, chunk round
 * trip p99 81-96 -> 32 ms (`pnpm bench:lite`); a mint in the one-process suite 0.54-0.74 -> 0.43 CPU ms
 * (`pnpm bench`), all on 2026-11-24. It is where the limit starts, not memory taken: start-up's garbage
 * stays until V8's memory reducer collects it after some seconds at rest (idle RSS 66-73 MiB after 25 s).
 * Not the pipeline: its start-up leaves more, which the reducer did not collect within 25 s (idle 97
 * against 76 MiB, over the 80 MiB target), for a smaller gain (35 against 43 % of a core under LITE).
 */
const HEAP_FLAGS = ["--initial-old-space-size=128"];

/** The flags of the process whose entry is `entry` (`services/pipeline/dist/main.js`, `gateway/src/main.ts`). */
export function nodeFlagsFor(entry: string): string[] {
  return /(^|\/)services\/pipeline\//.test(entry) ? [] : HEAP_FLAGS;
}
