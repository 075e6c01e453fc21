import { spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import { chmod, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { freePort } from "@avatar/runtime";
import { repoRoot, type SpawnedProcess, supervised, waitForReady } from "@avatar/testkit";
import { browserAvailable, launchChromium } from "@avatar/testkit/browser";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChatCompletionsServer } from "../../packages/providers/test/servers/chat-completions-server.js";
import { type EmbedGlobals, embedInState, startConversation } from "./embed-page-support.js";
import { ADA, key } from "./sessions-support.js";

/**
 * `pnpm start` as a newcomer runs it: the one-process suite's bundle, built first, on embedded defaults
 * (its own Postgres under DATA_DIR, the in-process bus), with the demo space whose key it prints once. A
 * real Chromium opens an embed of a sandbox session on it and sees the avatar's video and hears its voice
 * answer a typed message (the answer from a local chat-completions server). How well the mouth follows
 * the voice is measured on the sources (embed-media.solo.test.ts); this is the bundle people start.
 */

const available = browserAvailable("the pnpm start browser test");
const SHOTS = path.resolve(".ci/out/start");
mkdirSync(SHOTS, { recursive: true });

let started: { proc: SpawnedProcess; url: string } | undefined;
let dataDir: string | undefined;
let llm: ChatCompletionsServer | undefined;
let browser: Browser | undefined;

/** `pnpm start` in a process group of its own, so that stopping it stops pnpm, the shell and node alike. */
async function pnpmStart(env: Record<string, string>): Promise<NonNullable<typeof started>> {
  const port = await freePort();
  const { DATABASE_URL: _db, NATS_URL: _nats, NODE_OPTIONS: _node, ...inherited } = process.env;
  const child = spawn("pnpm", ["start"], {
    cwd: repoRoot,
    env: { ...inherited, ...env, PORT: String(port), METRICS_PORT: String(await freePort()) },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  const proc = supervised("pnpm start", child, { group: true, graceMs: 20_000 });
  const url = `http://127.0.0.1:${port}`;
  await waitForReady(`${url}/readyz`, proc, 90_000, 200);
  return { proc, url };
}

beforeAll(async () => {
  if (!available) return;
  dataDir = await mkdtemp(path.join(tmpdir(), "avatar-start-"));
  // As root, the embedded Postgres runs as a user of its own, which must reach its folder in here.
  await chmod(dataDir, 0o755);
  llm = await ChatCompletionsServer.start();
  started = await pnpmStart({ DATA_DIR: dataDir, LOCAL_LLM_URL: llm.baseUrl });
  browser = await launchChromium();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await started?.proc.stop();
  await llm?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

/** What the probe reads in the page (this project's TypeScript has no DOM types). */
interface PageGlobals extends EmbedGlobals {
  avatarEmbed: EmbedGlobals["avatarEmbed"] & {
    peer: { getStats(): Promise<Map<string, Record<string, unknown>>> };
  };
  AudioContext: new () => {
    createMediaStreamSource(stream: unknown): { connect(node: unknown): void };
    createAnalyser(): { fftSize: number; getFloatTimeDomainData(out: Float32Array): void };
    resume(): Promise<void>;
  };
  MediaStream: new (tracks: unknown[]) => unknown;
  setInterval(fn: () => void, ms: number): number;
  __heard?: { loudest: number };
}

describe.skipIf(!available)("pnpm start", () => {
  it("builds and runs the suite's bundle, whose avatar a browser sees and hears", async () => {
    if (!started || !llm || !browser) throw new Error("not started");
    const { url } = started;
    const output = started.proc.output;
    expect(output()).toMatch(/built suite\/dist\/main\.js/);
    const apiKey = /Demo API key[^:]*: (\S+)/.exec(output())?.[1];
    expect(apiKey, output()).toBeDefined();

    const res = await fetch(`${url}/v2/embeddings`, {
      method: "POST",
      headers: { ...key(apiKey ?? ""), "Content-Type": "application/json" },
      body: JSON.stringify({ avatar_id: ADA, is_sandbox: true }),
    });
    const embed = (await res.json()) as { data: { url: string } };
    expect(res.status, JSON.stringify(embed)).toBe(200);

    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    page.on("pageerror", (err: Error) => {
      throw err;
    });
    await page.goto(embed.data.url);
    await startConversation(page, true, 30_000);
    // The loudest the received voice gets, read every 10 ms from the track the page plays.
    await page.evaluate(async () => {
      const w = globalThis as unknown as PageGlobals;
      const heard = { loudest: 0 };
      w.__heard = heard;
      const audio = new w.AudioContext();
      await audio.resume();
      const analyser = audio.createAnalyser();
      analyser.fftSize = 512;
      audio
        .createMediaStreamSource(new w.MediaStream(w.avatarEmbed.video.srcObject?.getAudioTracks() ?? []))
        .connect(analyser);
      const buffer = new Float32Array(512);
      w.setInterval(() => {
        analyser.getFloatTimeDomainData(buffer);
        let sum = 0;
        for (const v of buffer) sum += v * v;
        heard.loudest = Math.max(heard.loudest, Math.sqrt(sum / buffer.length));
      }, 10);
    });
    const framesDecoded = () =>
      page.evaluate(async () => {
        for (const report of (
          await (globalThis as unknown as PageGlobals).avatarEmbed.peer.getStats()
        ).values()) {
          if (report.type === "inbound-rtp" && report.kind === "video")
            return Number(report.framesDecoded ?? 0);
        }
        return 0;
      });
    const framesBefore = await framesDecoded();

    llm.enqueue({ kind: "stream", pieces: ["Hello! ", "I am the avatar, speaking to you from the bundle."] });
    await page.keyboard.type("Please say something");
    await page.keyboard.press("Enter");
    await embedInState(page, "speaking", 30_000);
    await page.waitForTimeout(1_000);
    await page.screenshot({ path: path.join(SHOTS, "speaking.png") });
    await embedInState(page, "live", 30_000);
    const loudest = await page.evaluate(() => (globalThis as unknown as PageGlobals).__heard?.loudest ?? 0);
    const framesAfter = await framesDecoded();
    await page.close();

    console.info(
      "pnpm start, media in the browser:",
      JSON.stringify({ frames: framesAfter - framesBefore, loudest }),
    );
    // Seen: the video kept coming while the avatar answered (25 frames a second, a few seconds of it).
    expect(framesAfter - framesBefore).toBeGreaterThan(50);
    // Heard: the voice on the received track (silence reads ~0; the voice reaches 0.2 or so).
    expect(loudest).toBeGreaterThan(0.02);
  });
});
