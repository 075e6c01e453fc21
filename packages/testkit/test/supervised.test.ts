import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { supervised } from "../src/processes.js";
import { waitFor } from "../src/waits.js";

/** A shell that starts a child of its own and prints its pid, as `pnpm start` starts node. */
function shellWithChild(detached: boolean) {
  return spawn("sh", ["-c", "sleep 60 & echo $!; wait"], { stdio: ["ignore", "pipe", "pipe"], detached });
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function grandchildOf(proc: ReturnType<typeof supervised>): Promise<number> {
  await waitFor("the shell's child", () => /^\d+\n/.test(proc.output()), 5_000);
  return Number(proc.output().trim());
}

describe("supervised", () => {
  it("collects what the process writes and stops its whole group with `group`", async () => {
    const proc = supervised("shell", shellWithChild(true), { group: true });
    const sleeper = await grandchildOf(proc);
    expect(alive(sleeper)).toBe(true);
    await proc.stop(2_000);
    await waitFor("the group to stop", () => !alive(sleeper), 5_000);
    expect(await proc.stop()).toBe(proc.child.exitCode);
  });

  it("with `group` answers only once every process of the group is gone, not when the leader is", async () => {
    // The leader leaves at SIGTERM; its child takes 600 ms to stop, as an embedded Postgres finishing.
    const child = spawn(
      "sh",
      ["-c", "sh -c 'trap \"sleep 0.6; exit 0\" TERM; echo $$; while :; do sleep 0.05; done' & wait"],
      { stdio: ["ignore", "pipe", "pipe"], detached: true },
    );
    const proc = supervised("shell", child, { group: true });
    const slow = await grandchildOf(proc);
    await proc.stop(5_000);
    expect(alive(slow)).toBe(false);
  });

  it("without `group` stops the process alone", async () => {
    const proc = supervised("shell", shellWithChild(false));
    const sleeper = await grandchildOf(proc);
    await proc.stop(2_000);
    try {
      expect(alive(sleeper)).toBe(true);
    } finally {
      process.kill(sleeper, "SIGKILL");
    }
  });
});
