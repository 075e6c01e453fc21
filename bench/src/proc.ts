import { readdirSync, readFileSync } from "node:fs";
import { cpuMsOf, statFields } from "@avatar/testkit";

/** Resident memory and CPU time of processes, from /proc (Linux). */

/** Resident set size of `pid` in bytes (0 when it is gone). */
export function rssBytes(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = /^VmRSS:\s+(\d+) kB/m.exec(status)?.[1];
    return kb ? Number(kb) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** `read` summed over the processes `pids` (a service's processes, or a process and its children). */
export function sumOver(pids: readonly number[], read: (pid: number) => number): number {
  return pids.reduce((total, pid) => total + read(pid), 0);
}

/** CPU time `pid` has used so far, in seconds (user + system; 0 when it is gone). */
export const cpuSeconds = (pid: number): number => cpuMsOf(`/proc/${pid}/stat`) / 1000;

/**
 * Write system calls `pid` has made so far (`syscw` of /proc/<pid>/io: write, writev and the like, to
 * sockets, pipes, eventfds and files alike; 0 when unreadable). On this VM a write that wakes another
 * process costs its writer 70-150 µs, so their number per operation is a cost that, unlike a time, does
 * not drift with the host's speed.
 */
export function writeCalls(pid: number): number {
  try {
    const io = readFileSync(`/proc/${pid}/io`, "utf8");
    return Number(/^syscw:\s+(\d+)/m.exec(io)?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/**
 * Page faults `pid` has taken so far (minflt + majflt of /proc/<pid>/stat; 0 when it is gone): memory it
 * touched for the first time, or again after giving it back to the kernel. On the VMs of 2026-12-07 each
 * cost ~16 µs (a 1 GiB buffer filled once took 4.2 s, filled again 0.05 s), so a process whose memory grows
 * or churns under load stalls for it, and a count, unlike a time, does not drift with the host.
 */
export function pageFaults(pid: number): number {
  const fields = statFields(`/proc/${pid}/stat`);
  return fields ? Number(fields[7]) + Number(fields[9]) : 0;
}

/**
 * Resident bytes of `pid`'s `[heap]` mapping (/proc/<pid>/smaps; 0 when it is gone): glibc malloc's main
 * arena, where a Node process's Buffers and other native allocations below malloc's mmap threshold live.
 * Memory freed there stays resident until the arena's top is free to trim, so after a burst of sockets
 * and Buffers it is what a process keeps at rest once V8 has shrunk its own heap.
 */
export function mallocHeapBytes(pid: number): number {
  let smaps: string;
  try {
    smaps = readFileSync(`/proc/${pid}/smaps`, "utf8");
  } catch {
    return 0;
  }
  const heap = /^[0-9a-f]+-[0-9a-f]+ .*\[heap\]\n(?:[A-Za-z_]+:.*\n)*?Rss:\s+(\d+) kB/m.exec(smaps);
  return heap ? Number(heap[1]) * 1024 : 0;
}

/**
 * Times the kernel took the CPU from one of `pid`'s threads while it could still run
 * (`nonvoluntary_ctxt_switches`, summed over /proc/<pid>/task/*; 0 when it is gone). On two cores shared
 * by a dozen busy processes a message waits for each of these on its way, so their number per chunk says
 * how much of LITE's tail is the host's scheduling rather than the code on the path.
 */
export const preemptions = (pid: number): number => threadSwitches(pid, "nonvoluntary_ctxt_switches");

/**
 * Times one of `pid`'s threads gave up the CPU to wait (`voluntary_ctxt_switches`, summed over its
 * threads; 0 when it is gone): at rest, each is a wake-up that ended, a timer or a poll with nothing to
 * do, and each costs the host a switch whatever the process then does.
 */
export const wakeups = (pid: number): number => threadSwitches(pid, "voluntary_ctxt_switches");

function threadSwitches(
  pid: number,
  field: "voluntary_ctxt_switches" | "nonvoluntary_ctxt_switches",
): number {
  const pattern = new RegExp(`^${field}:\\s+(\\d+)`, "m");
  try {
    return readdirSync(`/proc/${pid}/task`).reduce((sum, tid) => {
      try {
        const status = readFileSync(`/proc/${pid}/task/${tid}/status`, "utf8");
        return sum + Number(pattern.exec(status)?.[1] ?? 0);
      } catch {
        return sum; // the thread ended in between
      }
    }, 0);
  } catch {
    return 0;
  }
}

/**
 * How much a per-process count (`count`, e.g. cpuSeconds) of the processes `pids()` names grows from now
 * until the answer is called, over the processes alive at both moments (Postgres backends come and go).
 */
export function growthReading(pids: () => number[], count: (pid: number) => number): () => number {
  const start = new Map(pids().map((pid) => [pid, count(pid)]));
  return () =>
    pids().reduce((sum, pid) => {
      const before = start.get(pid);
      return before === undefined ? sum : sum + Math.max(0, count(pid) - before);
    }, 0);
}

/** CPU seconds that the processes `pids()` names use from now until the answer is called. */
export const cpuReading = (pids: () => number[]): (() => number) => growthReading(pids, cpuSeconds);

/** The process's short name (`node`, `postgres`, `nats-server`). */
export function commOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/comm`, "utf8").trim();
  } catch {
    return "?";
  }
}

/** The process's command line, its arguments joined by spaces ("" when it is gone). */
export function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " ").trim();
  } catch {
    return "";
  }
}

/** Every process below `root`, at any depth. */
export function descendants(root: number): number[] {
  const parentOf = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const parent = statFields(`/proc/${entry}/stat`)?.[1];
    if (parent !== undefined) parentOf.set(Number(entry), Number(parent));
  }
  const found: number[] = [];
  const walk = (pid: number) => {
    for (const [child, parent] of parentOf) {
      if (parent === pid) {
        found.push(child);
        walk(child);
      }
    }
  };
  walk(root);
  return found;
}

export const mib = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;
