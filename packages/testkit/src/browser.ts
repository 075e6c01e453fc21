/**
 * A headless Chromium for browser tests: Debian's `chromium` (apt-get install chromium) driven by
 * playwright-core (Playwright's own browser download cannot run here). Started as root with no
 * sandbox and without the background networking a closed network refuses; a new profile each time.
 */
import { accessSync, constants } from "node:fs";
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

export async function launchChromium(options: LaunchOptions = {}): Promise<Browser> {
  const executablePath = findChromium();
  if (!executablePath) throw new Error("chromium not found (CHROMIUM_BIN or apt-get install chromium)");
  return chromium.launch({
    executablePath,
    headless: true,
    ...options,
    args: [...CHROMIUM_FLAGS, ...(options.args ?? [])],
  });
}
