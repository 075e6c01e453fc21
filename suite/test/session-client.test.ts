import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { type ConversationOptions, runConversation } from "@avatar/session-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { framesOf } from "../../packages/media/test/ffmpeg-decode.js";
import { ChatCompletionsServer } from "../../packages/providers/test/servers/chat-completions-server.js";
import { startTestSuite, type TestSuite } from "./support.js";

/** The example client script (`pnpm session-client`) against the whole suite on a real port. */

let suite: TestSuite;
let llm: ChatCompletionsServer;
beforeAll(async () => {
  llm = await ChatCompletionsServer.start();
  suite = await startTestSuite({ env: { LOCAL_LLM_URL: llm.baseUrl } });
});
afterAll(async () => {
  await suite?.stop();
  await llm?.close();
});

/** A sandbox conversation with the suite's demo key, its lines kept. */
async function converse(options: Pick<ConversationOptions, "mode" | "text" | "say">) {
  const lines: string[] = [];
  const report = await runConversation({
    baseUrl: suite.gatewayUrl,
    apiKey: suite.apiKey,
    sandbox: true,
    print: (line) => lines.push(line),
    ...options,
  });
  return { report, lines };
}

const types = (lines: string[]) => lines.map((l) => l.match(/ms {2}(\S+)/)?.[1]).filter(Boolean);

describe("pnpm session-client", () => {
  it("runs a LITE sandbox session: an utterance played out in real time, an interrupt, a stop", async () => {
    const { report, lines } = await converse({ mode: "LITE", text: "" });
    expect(report.playedMs).toBeGreaterThanOrEqual(1950);
    expect(report.playedMs).toBeLessThan(5000);
    expect(report).toMatchObject({ stoppedWith: "USER_CLOSED", closeCode: 1000 });
    const seen = types(lines);
    for (const type of [
      "session.state_updated",
      "agent.audio_buffer_appended",
      "agent.audio_buffer_committed",
      "agent.speak_started",
      "agent.speak_ended",
      "agent.speak_interrupted",
      "agent.audio_buffer_cleared",
      "session.stopped",
    ])
      expect(seen, type).toContain(type);
    expect(seen.indexOf("agent.speak_started")).toBeLessThan(seen.indexOf("agent.speak_ended"));
    expect(seen.at(-1)).toBe("session.stopped");
  });

  it("runs a FULL sandbox session that speaks with the local synthesizer", async () => {
    const { report, lines } = await converse({ mode: "FULL", text: "Good morning, and welcome." });
    expect(report.playedMs).toBeGreaterThan(500);
    expect(report.interrupted).toBe(false);
    expect(types(lines)).toEqual(expect.arrayContaining(["avatar.speak_started", "avatar.transcription"]));
  });

  it("has the avatar answer the text through its language model (--say)", async () => {
    llm.enqueue({ kind: "stream", pieces: ["The weather ", "is fine today."] });
    const { report, lines } = await converse({ mode: "FULL", text: "How is the weather?", say: true });
    expect(report.playedMs).toBeGreaterThan(500);
    // The model was asked the text, and its answer is what the avatar said.
    const asked = JSON.stringify(llm.requests.at(-1)?.body?.messages);
    expect(asked).toContain("How is the weather?");
    const said = lines.filter((l) => / avatar\.transcription /.test(l)).join("\n");
    expect(said).toContain("is fine today.");
    expect(said).not.toContain("How is the weather?");
  });

  it("refuses --say for a LITE session before minting anything", async () => {
    const sessions = async () =>
      (await suite.clients.sessions.listSessions({ spaceId: suite.spaceId })).page?.count;
    const before = await sessions();
    await expect(converse({ mode: "LITE", text: "Hello?", say: true })).rejects.toThrow(
      /say needs FULL mode/,
    );
    expect(await sessions()).toBe(before);
  });

  it("names the token endpoint's refusal when no avatar fits", async () => {
    await expect(
      runConversation({
        baseUrl: suite.gatewayUrl,
        apiKey: "lak_not_a_key",
        mode: "LITE",
        sandbox: true,
        text: "",
        print: () => {},
      }),
    ).rejects.toThrow(/avatars: HTTP 401/);
  });

  it("records what a WHEP viewer receives to a file ffmpeg decodes (--record)", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "session-client-"));
    const file = path.join(dir, "session.mkv");
    try {
      const lines: string[] = [];
      const report = await runConversation({
        baseUrl: suite.gatewayUrl,
        apiKey: suite.apiKey,
        mode: "LITE",
        sandbox: true,
        text: "",
        record: file,
        print: (line) => lines.push(line),
      });
      expect(report.recording?.videoFrames).toBeGreaterThan(25);
      expect(report.recording?.audioPackets).toBeGreaterThan(50);
      expect(lines.some((l) => l.startsWith("recorded "))).toBe(true);
      expect(statSync(file).size).toBeGreaterThan(10_000);
      // Decoded frame by frame: video (stream 0) and audio (stream 1) are both there.
      const decoded = framesOf(file);
      expect(decoded.status, decoded.errors).toBe(0);
      const count = (stream: number) => decoded.frames.filter((f) => f.stream === stream).length;
      const why = `recorded ${JSON.stringify(report.recording)}; ffmpeg: ${decoded.errors}`;
      expect(count(0), why).toBeGreaterThan(25);
      expect(count(1)).toBeGreaterThan(25);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
