import { runConversation } from "@avatar/session-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestSuite, type TestSuite } from "./support.js";

/** The example client script (`pnpm session-client`) against the whole suite on a real port. */

let suite: TestSuite;
beforeAll(async () => {
  suite = await startTestSuite();
});
afterAll(async () => {
  await suite?.stop();
});

const types = (lines: string[]) => lines.map((l) => l.match(/ms {2}(\S+)/)?.[1]).filter(Boolean);

describe("pnpm session-client", () => {
  it("runs a LITE sandbox session: an utterance played out in real time, an interrupt, a stop", async () => {
    const lines: string[] = [];
    const report = await runConversation({
      baseUrl: suite.gatewayUrl,
      apiKey: suite.apiKey,
      mode: "LITE",
      sandbox: true,
      text: "",
      print: (line) => lines.push(line),
    });
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
    const lines: string[] = [];
    const report = await runConversation({
      baseUrl: suite.gatewayUrl,
      apiKey: suite.apiKey,
      mode: "FULL",
      sandbox: true,
      text: "Good morning, and welcome.",
      print: (line) => lines.push(line),
    });
    expect(report.playedMs).toBeGreaterThan(500);
    expect(report.interrupted).toBe(false);
    expect(types(lines)).toEqual(expect.arrayContaining(["avatar.speak_started", "avatar.transcription"]));
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
});
