/**
 * What every process's `node` runs with, wherever it runs: the manifests (deploy/base, checked by
 * deploy/test), the image's CMD and CI's image step, the processes tests and benchmarks spawn
 * (@avatar/testkit), `pnpm start`.
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
