import { spawn } from "node:child_process";
import { once } from "node:events";
import { availableParallelism } from "node:os";
import { describe, expect, it } from "vitest";
import {
  growthReading,
  mallocHeapBytes,
  pageFaults,
  preemptions,
  rssBytes,
  sumOver,
  wakeups,
  writeCalls,
} from "../src/proc.js";
import { isClientBackend } from "../src/servers/postgres.js";

describe("writeCalls", () => {
  it("counts the write system calls a process makes", async () => {
    // A child that writes a line to its stdout pipe each time it reads one, then waits.
    const child = spawn(process.execPath, [
      "-e",
      "process.stdin.on('data', (d) => { for (const _ of String(d).trim().split('\\n')) require('node:fs').writeSync(1, 'x\\n'); })",
    ]);
    try {
      child.stdout.resume();
      await new Promise((r) => setTimeout(r, 300));
      const pid = child.pid as number;
      const read = growthReading(() => [pid], writeCalls);
      child.stdin.write("a\nb\nc\nd\ne\n");
      await once(child.stdout, "data");
      await new Promise((r) => setTimeout(r, 200));
      const grew = read();
      expect(grew).toBeGreaterThanOrEqual(5);
      // Node's own housekeeping may write a few times more (eventfd wake-ups), not hundreds.
      expect(grew).toBeLessThan(50);
    } finally {
      child.kill();
    }
  });

  it("is 0 for a process that is not there", () => {
    expect(writeCalls(2 ** 22 + 12345)).toBe(0);
  });
});

describe("pageFaults", () => {
  it("counts the pages a process touches anew: 64 MiB filled once is ~16,384 of them, filled again none", async () => {
    // A child that fills a buffer of fresh memory when asked "new", the same buffer again when asked "again".
    const child = spawn(process.execPath, [
      "-e",
      [
        "let b;",
        "process.stdin.on('data', (d) => {",
        "  if (String(d).trim() === 'new') b = Buffer.allocUnsafeSlow(64 * 1024 * 1024);",
        "  b.fill(1);",
        "  process.stdout.write('done\\n');",
        "});",
      ].join(""),
    ]);
    const ask = async (what: string) => {
      child.stdin.write(`${what}\n`);
      await once(child.stdout, "data");
    };
    try {
      await new Promise((r) => setTimeout(r, 300));
      const pid = child.pid as number;
      const first = growthReading(() => [pid], pageFaults);
      await ask("new");
      const fresh = first();
      const second = growthReading(() => [pid], pageFaults);
      await ask("again");
      const again = second();
      // 4 KiB pages; with transparent huge pages fewer, but far more than a refill's.
      expect(fresh).toBeGreaterThan(500);
      expect(again).toBeLessThan(fresh / 10);
    } finally {
      child.kill();
    }
  });

  it("is 0 for a process that is not there", () => {
    expect(pageFaults(2 ** 22 + 12345)).toBe(0);
  });
});

describe("mallocHeapBytes", () => {
  it("reads the resident part of malloc's main arena: 64 MiB of 64 KiB Buffers kept there grow it by about that", async () => {
    // Buffers of 64 KiB are below glibc's mmap threshold (128 KiB), so malloc takes them from [heap].
    const child = spawn(process.execPath, [
      "-e",
      [
        "const kept = [];",
        "process.stdin.on('data', () => {",
        "  for (let i = 0; i < 1024; i++) kept.push(Buffer.allocUnsafeSlow(64 * 1024).fill(1));",
        "  process.stdout.write('done\\n');",
        "});",
      ].join(""),
    ]);
    try {
      await new Promise((r) => setTimeout(r, 300));
      const pid = child.pid as number;
      const before = mallocHeapBytes(pid);
      child.stdin.write("go\n");
      await once(child.stdout, "data");
      const grown = mallocHeapBytes(pid) - before;
      expect(grown).toBeGreaterThan(60 * 1024 * 1024);
      expect(grown).toBeLessThan(80 * 1024 * 1024);
    } finally {
      child.kill();
    }
  });

  it("is 0 for a process that is not there", () => {
    expect(mallocHeapBytes(2 ** 22 + 12345)).toBe(0);
  });
});

describe("preemptions", () => {
  it("counts the times a busy process was made to wait while it could run", async () => {
    // More busy processes than cores: the kernel has to take the CPU from them in turn.
    const busy = Array.from({ length: availableParallelism() + 1 }, () =>
      spawn(process.execPath, [
        "-e",
        "const end = Date.now() + 800; while (Date.now() < end); setInterval(() => {}, 1000);",
      ]),
    );
    try {
      await new Promise((r) => setTimeout(r, 1_000));
      const counts = busy.map((c) => preemptions(c.pid as number));
      expect(counts.reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
    } finally {
      for (const c of busy) c.kill();
    }
  });

  it("is 0 for a process that is not there", () => {
    expect(preemptions(2 ** 22 + 12345)).toBe(0);
  });
});

describe("wakeups", () => {
  it("counts the times a process slept and woke: a 5 ms timer wakes it far more than a 1 s one", async () => {
    const child = (intervalMs: number) =>
      spawn(process.execPath, ["-e", `setInterval(() => {}, ${intervalMs});`]);
    const ticking = child(5);
    const resting = child(1_000);
    try {
      await new Promise((r) => setTimeout(r, 300));
      const ticks = growthReading(() => [ticking.pid as number], wakeups);
      const rests = growthReading(() => [resting.pid as number], wakeups);
      await new Promise((r) => setTimeout(r, 1_000));
      expect(ticks()).toBeGreaterThan(100);
      expect(rests()).toBeLessThan(ticks() / 4);
    } finally {
      ticking.kill();
      resting.kill();
    }
  });

  it("is 0 for a process that is not there", () => {
    expect(wakeups(2 ** 22 + 12345)).toBe(0);
  });
});

describe("growthReading", () => {
  it("adds the growth of the processes alive at both readings", () => {
    const counts = new Map([
      [1, 10],
      [2, 5],
    ]);
    const pids = [1, 2];
    const read = growthReading(
      () => pids,
      (pid) => counts.get(pid) ?? 0,
    );
    counts.set(1, 14);
    counts.set(2, 7);
    counts.set(3, 100);
    pids.push(3); // came after the first reading: not counted
    pids.splice(1, 1); // pid 2 gone: its growth is not known
    expect(read()).toBe(4);
  });
});

describe("isClientBackend", () => {
  it("tells a backend serving a client from the server's own processes", () => {
    expect(isClientBackend("postgres: postgres bench_1 127.0.0.1(53648) idle")).toBe(true);
    expect(isClientBackend("postgres: postgres postgres [local] SELECT")).toBe(true);
    expect(isClientBackend("postgres: checkpointer")).toBe(false);
    expect(isClientBackend("postgres: background writer")).toBe(false);
    expect(isClientBackend("postgres: walwriter")).toBe(false);
    expect(isClientBackend("postgres: autovacuum launcher")).toBe(false);
    expect(isClientBackend("postgres: autovacuum worker bench_1")).toBe(false);
    expect(isClientBackend("postgres: logical replication launcher")).toBe(false);
    expect(isClientBackend("/usr/lib/postgresql/15/bin/postgres -D /tmp/x/data")).toBe(false);
  });
});

describe("sumOver", () => {
  it("adds a reading over processes, one that is gone adding its reading of 0", () => {
    expect(sumOver([process.pid, 999_999_999], rssBytes)).toBeGreaterThan(0);
    expect(sumOver([999_999_999], rssBytes)).toBe(0);
    expect(sumOver([1, 2, 3], (pid) => pid * 10)).toBe(60);
    expect(sumOver([], rssBytes)).toBe(0);
  });
});
