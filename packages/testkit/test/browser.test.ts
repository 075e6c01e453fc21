import { readdirSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { browserAvailable, browserEnvironment, launchChromium } from "../src/browser.js";
import { statFields } from "../src/proc.js";

/** The processes descended from `root`. */
function descendants(root: number): number[] {
  const parents = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    const ppid = /^\d+$/.test(entry) ? statFields(`/proc/${entry}/stat`)?.[1] : undefined;
    if (ppid !== undefined) parents.set(Number(entry), Number(ppid));
  }
  const isBelow = (pid: number): boolean => {
    for (let p = parents.get(pid); p !== undefined && p > 1; p = parents.get(p)) if (p === root) return true;
    return false;
  };
  return [...parents.keys()].filter(isBelow);
}

describe("browserEnvironment", () => {
  it("drops libfaketime and its settings, keeps every other preload and variable", () => {
    const faketime = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1";
    expect(
      browserEnvironment({
        PATH: "/usr/bin",
        LD_PRELOAD: `/opt/a.so ${faketime}:/opt/b.so`,
        FAKETIME: "+400d",
        FAKETIME_DONT_FAKE_MONOTONIC: "1",
        UNSET: undefined,
      }),
    ).toEqual({ PATH: "/usr/bin", LD_PRELOAD: "/opt/a.so:/opt/b.so" });
    expect(browserEnvironment({ LD_PRELOAD: faketime, HOME: "/root" })).toEqual({ HOME: "/root" });
  });
});

describe.skipIf(!browserAvailable("the Chromium launcher test"))("launchChromium", () => {
  it("runs Chromium with no thread above normal priority, as a user's browser (root included)", async () => {
    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      await page.setContent("<p>hello</p>");
      const niceness = descendants(process.pid).flatMap((pid) => {
        let tasks: string[] = [];
        try {
          tasks = readdirSync(`/proc/${pid}/task`);
        } catch {}
        return tasks.flatMap((tid) => {
          const nice = statFields(`/proc/${pid}/task/${tid}/stat`)?.[16];
          return nice === undefined ? [] : [Number(nice)];
        });
      });
      // Chromium's own threads: dozens; as root without the launcher, its UI and IO threads go to -8.
      expect(niceness.length).toBeGreaterThan(10);
      expect(Math.min(...niceness)).toBeGreaterThanOrEqual(0);
    } finally {
      await browser.close();
    }
  });
});
