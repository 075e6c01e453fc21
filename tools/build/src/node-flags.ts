/**
 * What every process's `node` runs with (nodeFlagsFor adds what one process needs besides), wherever it
 * runs: the manifests (deploy/base) and the image's CMDs (both checked by deploy/test), CI's image step,
 * the processes tests and benchmarks spawn (@avatar/testkit), `pnpm start`.
 *
 * A larger initial old space. V8 counts the memory of ArrayBuffers (socket reads, ws frames, bus
 * messages, HTTP bodies) towards the limit that starts a full mark-compact, and at its default a gateway
 * relaying 1,000 LITE sessions (a 64 KiB chunk a second each) ran one every ~70 ms with a 25 MB heap:
 * 236 in a run, a quarter of its CPU in GC. With 128 MB: 44; gateway CPU 44-48 % -> 21 %, pipeline
 * 43-45 -> 35-38 %, chunk round trip p99 81-96 -> 32-57 ms (`pnpm bench:lite`); CPU per mint in one
 * process 0.54-0.74 -> 0.43 ms, as processes 4.0 -> 2.1 ms (`pnpm bench`), all on 2026-11-24. It is
 * where the limit starts, not memory taken: start-up's garbage stays until V8's memory reducer collects
 * it after some seconds at rest (RSS 2 s after ready 73-78 MiB, idle 66-71 MiB after 25 s); the pods'
 * 512 MiB limit leaves room for what a busy process keeps before a collection.
 */
export const NODE_FLAGS = ["--initial-old-space-size=128"];

/**
 * What a process adds to NODE_FLAGS, by its package's directory (`services/<name>`).
 *
 * The pipeline: a young generation of up to 32 MB a semi-space instead of V8's 16. Every LITE chunk it
 * takes in is a 64 KiB JSON text, and the text and the base64 audio it holds are both new strings, so at
 * 1,000 sessions it filled 16 MB about 13 times a second, each scavenge ~1.9 ms on its event loop. With 32
 * MB it scavenges half as often, at the same cost each (what survives does not grow); `pnpm bench:lite` on
 * 2026-11-27, alternated runs: pipeline GC 21-25 -> 12-15 ms a second, chunk round trip p99 10.6-13.7 ->
 * 7.2-9.7 ms (in plain runs within the noise). Young memory is taken only while the process allocates that
 * fast; at rest it stays small. Not for the gateway or the one-process suite: there LITE's p99 got worse
 * with it (README).
 */
const OWN_FLAGS: Record<string, readonly string[]> = {
  pipeline: ["--max-semi-space-size=32"],
};

/** Every flag of the process whose entry point is `main` (`services/pipeline/dist/main.js`, ...). */
export function nodeFlagsFor(main: string): string[] {
  const name = /(?:^|\/)services\/([^/]+)\//.exec(main)?.[1];
  return [...NODE_FLAGS, ...((name && OWN_FLAGS[name]) || [])];
}
