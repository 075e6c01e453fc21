import { browserAvailable, launchChromium } from "@avatar/testkit/browser";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll } from "vitest";
import { grant } from "./sessions-support.js";
import { startTestSuite, type TestSuite } from "./support.js";

/**
 * What a browser test file runs on: the suite (with credits) and a Chromium, started before its tests
 * and stopped after them. `available` is false when there is no Chromium (then the file's tests skip;
 * under CI=true that is an error instead).
 */
export function browserSuite(what: string): {
  available: boolean;
  ctx: { suite: TestSuite; browser: Browser };
} {
  const available = browserAvailable(what);
  const ctx = {} as { suite: TestSuite; browser: Browser };
  beforeAll(async () => {
    if (!available) return;
    ctx.suite = await startTestSuite();
    await grant(ctx.suite, "100");
    ctx.browser = await launchChromium();
  });
  afterAll(async () => {
    await ctx.browser?.close();
    await ctx.suite?.stop();
  });
  return { available, ctx };
}
