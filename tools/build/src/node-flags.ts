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
 * What a process adds to NODE_FLAGS, or sets otherwise, by its package's directory (`services/<name>`,
 * `gateway`).
 *
 * The gateway and the pipeline, which relay every LITE chunk: an initial old space of 512 MB. At 128
 * their 64 KiB of ArrayBuffers a chunk (socket reads, frames, the decoded audio) still started a full
 * mark-compact every 0.5-1.2 s at 1,000 sessions (the gateway 42 and the pipeline 19 in a run, pauses of
 * 5-41 ms plus incremental steps up to 39 ms); at 512, three in the first 6 s of the load and then none
 * (`--trace-gc`). By turns, two rounds (`pnpm bench:lite`, 2026-12-07; README): chunk round trip p99 26
 * and 40 ms (4.3x and 3.8x the floor) at 512, 76 and 478 ms (9.8x, 46x) at 128, 82 and 37 (13.7x, 5.2x)
 * at 256. Their pods' memory limit leaves room for an old space that full before its first
 * collection (deploy/base/relay-memory.yaml, checked by deploy/test).
 *
 * The pipeline also: a young generation of up to 32 MB a semi-space instead of V8's 16. Every LITE chunk it
 * takes in is a 64 KiB JSON text, and the text and the base64 audio it holds are both new strings, so at
 * 1,000 sessions it filled 16 MB about 13 times a second, each scavenge ~1.9 ms on its event loop. With 32
 * MB it scavenges half as often, at the same cost each (what survives does not grow); `pnpm bench:lite` on
 * 2026-11-27, alternated runs: pipeline GC 21-25 -> 12-15 ms a second, chunk round trip p99 10.6-13.7 ->
 * 7.2-9.7 ms (in plain runs within the noise). Young memory is taken only while the process allocates that
 * fast; at rest it stays small. Not for the gateway or the one-process suite: there LITE's p99 got worse
 * with it (README).
 */
const RELAY_OLD_SPACE = "--initial-old-space-size=512";
const OWN_FLAGS: Record<string, readonly string[]> = {
  gateway: [RELAY_OLD_SPACE],
  pipeline: [RELAY_OLD_SPACE, "--max-semi-space-size=32"],
};

/** A flag's name: `--initial-old-space-size` of `--initial-old-space-size=128`. */
const flagName = (flag: string): string => flag.split("=")[0] ?? flag;

/**
 * Every flag of the process whose entry point is `main` (`services/pipeline/dist/main.js`,
 * `gateway/src/main.ts`, ...): its own in place of a common one of the same name.
 */
export function nodeFlagsFor(main: string): string[] {
  const name = /(?:^|\/)(?:services\/([^/]+)|(gateway))\/(?:src|dist)\//.exec(main);
  const own = OWN_FLAGS[name?.[1] ?? name?.[2] ?? ""] ?? [];
  const replaced = new Set(own.map(flagName));
  return [...NODE_FLAGS.filter((flag) => !replaced.has(flagName(flag))), ...own];
}
