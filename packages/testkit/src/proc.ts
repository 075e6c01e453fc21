import { readFileSync } from "node:fs";

/**
 * The fields of a /proc stat line (`/proc/<pid>/stat`, `/proc/<pid>/task/<tid>/stat`) after the command
 * name, which is in parentheses and may hold spaces: [0] state, [1] parent, [11] utime, [12] stime,
 * [16] nice. Undefined when it is gone (or not Linux).
 */
export function statFields(path: string): string[] | undefined {
  try {
    const stat = readFileSync(path, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return undefined;
  }
}

/** CPU time (user + system) of the process or thread whose stat file `path` is, in ms (10 ms ticks; 0 when gone). */
export function cpuMsOf(path: string): number {
  const fields = statFields(path);
  return fields ? (Number(fields[11]) + Number(fields[12])) * 10 : 0;
}
