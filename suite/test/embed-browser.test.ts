import { mkdirSync } from "node:fs";
import path from "node:path";
import type { Page } from "playwright-core";
import { beforeEach, describe, expect, it } from "vitest";
import { browserSuite } from "./browser-support.js";
import { embedInState } from "./embed-page-support.js";
import { ADA, CHLOE, key } from "./sessions-support.js";
import { atNextSecond, json } from "./support.js";

/**
 * The embed page as a visitor meets it, in a real Chromium: start, talk by typing, end and start again,
 * on a phone held both ways, with a keyboard and what a screen reader is told; and the failures a
 * visitor can meet, in plain words.
 */

const { available, ctx } = browserSuite("the embed page's browser tests");
// The visitors' endpoint is limited per client IP (10/s), and every test here comes from one address.
beforeEach(atNextSecond);

async function createEmbed(body: Record<string, unknown>): Promise<{ embed_id: string; url: string }> {
  const res = await ctx.suite.request("POST", "/v2/embeddings", { headers: key(ctx.suite.apiKey), body });
  const payload = await json(res);
  expect(res.status, JSON.stringify(payload)).toBe(200);
  return payload.data;
}

const embedUrl = async (body: Record<string, unknown>) => (await createEmbed(body)).url;

/** Screenshots for people to look at (CI keeps .ci/out). */
const SHOTS = path.resolve(".ci/out/embed");
mkdirSync(SHOTS, { recursive: true });

const PHONE_PORTRAIT = { width: 390, height: 844 };
const PHONE_LANDSCAPE = { width: 844, height: 390 };

async function open(url: string, viewport = PHONE_PORTRAIT): Promise<Page> {
  const page = await ctx.browser.newPage({ viewport });
  page.on("pageerror", (err: Error) => {
    throw err;
  });
  await page.goto(url);
  return page;
}

/**
 * What functions run in the page see of it (this project's TypeScript has no DOM types; the page's CSP
 * forbids evaluating strings, so probes are functions, serialized: they can use no outer name).
 */
interface PageGlobals {
  document: { querySelectorAll(selector: string): ArrayLike<{ textContent: string | null }> };
  getComputedStyle(element: unknown): { opacity: string };
}

/** Waits until the texts of the elements matching `selector` are `texts`. */
const hasTexts = (page: Page, selector: string, texts: string[]) =>
  page.waitForFunction(
    ([sel, wanted]) =>
      JSON.stringify(
        Array.from(
          (globalThis as unknown as PageGlobals).document.querySelectorAll(sel),
          (e) => e.textContent,
        ),
      ) === wanted,
    [selector, JSON.stringify(texts)] as const,
    { timeout: 20_000 },
  );

const button = (page: Page, name: string) => page.getByRole("button", { name, exact: true });

describe.skipIf(!available)("the embed page in a browser", () => {
  it("starts a conversation, answers a typed message, ends, and starts again", async () => {
    const page = await open(await embedUrl({ avatar_id: ADA, is_sandbox: true }));
    expect(await page.locator("#text").isDisabled()).toBe(true);
    // Before the start: the avatar's poster, a picture of it at rest.
    const poster = await page.locator("video").getAttribute("poster");
    const picture = await fetch(new URL(poster ?? "", page.url()));
    expect(picture.headers.get("content-type")).toBe("image/png");
    expect((await picture.arrayBuffer()).byteLength).toBeGreaterThan(10_000);
    await page.screenshot({ path: path.join(SHOTS, "before-start.png") });
    await button(page, "Start conversation").click();
    await embedInState(page, "live");
    expect(await page.locator("#start-overlay").isHidden()).toBe(true);

    // Keyboard only: the field is focused once the conversation is live; Enter sends.
    await page.keyboard.type("Please repeat after me");
    await page.keyboard.press("Enter");
    await hasTexts(page, ".log .user", ["Please repeat after me"]);

    await button(page, "End").click();
    await embedInState(page, "ended");
    await hasTexts(page, "#overlay-message", ["You ended the conversation."]);
    expect(await page.getByRole("status").textContent()).toBe("You ended the conversation.");
    expect(await page.locator("#text").isDisabled()).toBe(true);

    await button(page, "Start again").click();
    await embedInState(page, "live");
    await button(page, "End").click();
    await embedInState(page, "ended");
    await page.close();
  });

  for (const [orientation, viewport, minLog] of [
    ["horizontal", PHONE_PORTRAIT, 150],
    ["horizontal", PHONE_LANDSCAPE, 150],
    ["vertical", PHONE_PORTRAIT, 150],
    ["vertical", PHONE_LANDSCAPE, 150],
  ] as const) {
    it(`fits a ${viewport.width}x${viewport.height} phone with a ${orientation} embed`, async () => {
      const page = await open(await embedUrl({ avatar_id: ADA, is_sandbox: true, orientation }), viewport);
      await button(page, "Start conversation").click();
      await embedInState(page, "live");
      const stage = await page.locator(".stage").boundingBox();
      const log = await page.locator("#log").boundingBox();
      const input = await page.locator("#text").boundingBox();
      expect(stage && log && input).toBeTruthy();
      if (!stage || !log || !input) return;
      // The video keeps the embed's shape, the conversation stays usable, nothing leaves the screen.
      const ratio = orientation === "horizontal" ? 16 / 9 : 9 / 16;
      expect(stage.width / stage.height).toBeCloseTo(ratio, 1);
      expect(log.height).toBeGreaterThanOrEqual(minLog);
      for (const box of [stage, log, input]) {
        expect(box.x).toBeGreaterThanOrEqual(0);
        expect(box.y).toBeGreaterThanOrEqual(0);
        expect(box.x + box.width).toBeLessThanOrEqual(viewport.width + 1);
        expect(box.y + box.height).toBeLessThanOrEqual(viewport.height + 1);
      }
      await page.screenshot({
        path: path.join(SHOTS, `${orientation}-${viewport.width}x${viewport.height}.png`),
      });
      await button(page, "End").click();
      await embedInState(page, "ended");
      await page.close();
    });
  }

  it("tells a visitor in plain words when the avatar is not available, and lets them try again", async () => {
    const url = await embedUrl({ avatar_id: CHLOE });
    const deactivated = await ctx.suite.request("PATCH", `/v1/avatars/${CHLOE}`, {
      headers: key(ctx.suite.apiKey),
      body: { is_deactivated: true },
    });
    expect(deactivated.status).toBe(200);
    try {
      const page = await open(url);
      await button(page, "Start conversation").click();
      await embedInState(page, "error");
      // The gateway's visitor_message for reason `unavailable` (why is for the owner to know, not the visitor).
      const words = "This conversation cannot start right now. Please try again later.";
      await hasTexts(page, "#overlay-message", [words]);
      expect(await page.getByRole("status").textContent()).toBe(words);
      // What the visitor sees rendered (textContent would include the page's script).
      // biome-ignore lint/performance/useDomNodeTextContent: the rendered text is what is asserted
      const text = (await page.locator(".app").innerText()).toLowerCase();
      for (const leak of ["{", "deactivated", "avatar_id", "http", "error:"])
        expect(text).not.toContain(leak);
      expect(await button(page, "Try again").isEnabled()).toBe(true);
      await page.close();
    } finally {
      await ctx.suite.request("PATCH", `/v1/avatars/${CHLOE}`, {
        headers: key(ctx.suite.apiKey),
        body: { is_deactivated: false },
      });
    }
  });

  it("tells a visitor who talked before that its owner has since turned the embed off", async () => {
    const embed = await createEmbed({ avatar_id: ADA, is_sandbox: true });
    const page = await open(embed.url);
    // A first conversation: the gateway and the tokens service now hold the embed in their caches.
    await button(page, "Start conversation").click();
    await embedInState(page, "live");
    await button(page, "End").click();
    await embedInState(page, "ended");

    const off = await ctx.suite.request("PATCH", `/v2/embeddings/${embed.embed_id}`, {
      headers: key(ctx.suite.apiKey),
      body: { is_disabled: true },
    });
    expect(off.status).toBe(200);
    await button(page, "Start again").click();
    // A cached embed that missed the change would start a conversation here instead.
    await embedInState(page, "error");
    // The gateway's visitor_message for embed_disabled.
    const words = "This conversation is not available right now.";
    await hasTexts(page, "#overlay-message", [words]);
    expect(await page.getByRole("status").textContent()).toBe(words);
    expect(await button(page, "Try again").isEnabled()).toBe(true);
    await page.close();
  });

  it("tells a visitor the gateway's own words for why they cannot start (the embed's hourly limit)", async () => {
    const embed = await createEmbed({ avatar_id: ADA, is_sandbox: true, max_sessions_per_hour: 1 });
    // Another visitor has had this hour's only session.
    expect((await ctx.suite.request("POST", `/embed/${embed.embed_id}/session`)).status).toBe(200);
    const page = await open(embed.url);
    await button(page, "Start conversation").click();
    await embedInState(page, "error");
    // The gateway's visitor_message for embed_hourly_limit, not the page's own words for a 429.
    const words = "The avatar has had many visitors this hour. Please try again later.";
    await hasTexts(page, "#overlay-message", [words]);
    expect(await page.getByRole("status").textContent()).toBe(words);
    expect(await button(page, "Try again").isEnabled()).toBe(true);
    await page.close();
  });

  it("tells a visitor its own words when the answer has no visitor_message, never a developer's message", async () => {
    const page = await open(await embedUrl({ avatar_id: ADA, is_sandbox: true }));
    // What the mint answers in turn (not JSON, no visitor_message, not a string, no body) and what the
    // visitor is told: each text differs from the one before, so each wait sees its own attempt.
    const answers = [
      {
        status: 503,
        contentType: "text/html",
        body: "<h1>Service unavailable</h1>",
        told: "The avatar is busy right now. Please try again shortly.",
      },
      {
        status: 429,
        contentType: "application/json",
        body: JSON.stringify({ code: 4290, data: null, message: "Rate limit exceeded" }),
        told: "Lots of people are talking to this avatar right now. Please try again in a moment.",
      },
      {
        status: 403,
        contentType: "application/json",
        body: JSON.stringify({ code: 4030, data: null, message: "embed is disabled", visitor_message: 42 }),
        told: "This avatar isn't available right now.",
      },
      {
        status: 404,
        contentType: "application/json",
        body: "",
        told: "This conversation is no longer available.",
      },
    ];
    for (const [i, { told, ...answer }] of answers.entries()) {
      await page.route("**/embed/*/session", (route) => route.fulfill(answer), { times: 1 });
      await button(page, i === 0 ? "Start conversation" : "Try again").click();
      await hasTexts(page, "#overlay-message", [told]);
    }
    await page.close();
  });

  it("labels its field, announces its status and shows disabled controls as disabled", async () => {
    const page = await open(await embedUrl({ avatar_id: ADA, is_sandbox: true }));
    expect(await page.getByLabel("Message to the avatar").count()).toBe(1);
    const opacity = await page
      .locator("#send")
      .evaluate((el) => (globalThis as unknown as PageGlobals).getComputedStyle(el).opacity);
    expect(Number(opacity)).toBeLessThan(0.6);
    // Tab reaches the start button first and Enter presses it.
    await page.keyboard.press("Tab");
    await page.keyboard.press("Enter");
    await embedInState(page, "live");
    expect(await page.getByRole("status").textContent()).toBe("Connected. The avatar is listening.");
    expect(
      await page
        .locator("#send")
        .evaluate((el) => (globalThis as unknown as PageGlobals).getComputedStyle(el).opacity),
    ).toBe("1");
    await button(page, "End").click();
    await embedInState(page, "ended");
    await page.close();
  });
});
