/**
 * A headless Chromium for browser tests: Debian's `chromium` (apt-get install chromium) driven by
 * playwright-core (Playwright's own browser download cannot run here). Started as root with no
 * sandbox and without the background networking a closed network refuses; a new profile each time.
 */
import { accessSync, chmodSync, constants, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, chromium, type LaunchOptions } from "playwright-core";

const CANDIDATES = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"];

/** CHROMIUM_BIN, else the first Chromium found; null when there is none. */
export function findChromium(): string | null {
  const fromEnv = process.env.CHROMIUM_BIN;
  for (const path of fromEnv ? [fromEnv] : CANDIDATES) {
    try {
      accessSync(path, constants.X_OK);
      return path;
    } catch {}
  }
  return null;
}

/** Whether browser tests can run; under CI=true a missing Chromium is an error, not a skip. */
export function browserAvailable(what: string): boolean {
  const found = findChromium() !== null;
  if (!found && process.env.CI === "true") throw new Error(`chromium is required in CI (${what})`);
  if (!found) console.warn(`chromium not found: skipping ${what} (apt-get install chromium)`);
  return found;
}

export const CHROMIUM_FLAGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  // Sound may start without a gesture in tests that drive the page programmatically.
  "--autoplay-policy=no-user-gesture-required",
];

/** One launcher script per binary and process, not a new temporary folder at every launch. */
const launchers = new Map<string, string>();

/**
 * What Playwright starts for `binary`. As root (CI), a launcher that runs it without CAP_SYS_NICE:
 * Chromium raises its own UI, IO and compositor threads to nice -8 when it may, which a browser run by a
 * user cannot. Here the viewer's browser shares two cores with the server under test, and its boosted
 * threads would keep the server's encoders waiting for a core: a freeze the test would blame on the
 * server, which a real viewer's browser (on its own machine, unprivileged) does not cause.
 */
function launcher(binary: string): string {
  if (process.getuid?.() !== 0) return binary;
  let script = launchers.get(binary);
  if (!script) {
    script = join(mkdtempSync(join(tmpdir(), "chromium-")), "chromium");
    const quoted = `'${binary.replaceAll("'", `'\\''`)}'`;
    writeFileSync(
      script,
      `#!/bin/sh\nexec setpriv --bounding-set -sys_nice --inh-caps -sys_nice ${quoted} "$@"\n`,
    );
    chmodSync(script, 0o755);
    launchers.set(binary, script);
  }
  return script;
}

/**
 * This process's environment without libfaketime (CI's clock guard runs the tests under it). The browser
 * stands for a viewer's, on a machine of its own with its own clock; and Chromium under libfaketime never
 * finishes starting.
 */
export function browserEnvironment(from: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(from)) {
    if (value === undefined || name.startsWith("FAKETIME")) continue;
    if (name === "LD_PRELOAD") {
      const kept = value.split(/[:\s]+/).filter((lib) => lib !== "" && !lib.includes("faketime"));
      if (kept.length > 0) env[name] = kept.join(":");
      continue;
    }
    env[name] = value;
  }
  return env;
}

export async function launchChromium(options: LaunchOptions = {}): Promise<Browser> {
  const binary = findChromium();
  if (!binary) throw new Error("chromium not found (CHROMIUM_BIN or apt-get install chromium)");
  return chromium.launch({
    executablePath: launcher(binary),
    headless: true,
    env: browserEnvironment(),
    ...options,
    args: [...CHROMIUM_FLAGS, ...(options.args ?? [])],
  });
}
