// A presigning thread from the TypeScript sources: thread.ts through tsx (a worker thread does not
// inherit the parent's `--import tsx` on Node 20). `pnpm build` puts a bundle of thread.ts under this
// same name beside a process's bundle, which Es256Presigner then starts instead.
(await import("tsx/esm/api")).register();
await import("./thread.ts");
