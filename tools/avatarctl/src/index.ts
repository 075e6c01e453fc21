/** avatarctl in-process, for tests and scripts: `run(argv, io)` answers the exit code. */
export { commands, type Io, run } from "./cli.js";
