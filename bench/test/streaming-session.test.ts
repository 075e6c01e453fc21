import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import { WebSocketServer } from "ws";
import { RoundTrips } from "../src/lite/round-trips.js";
import { CHUNKS_PER_UTTERANCE, floorSession, StreamingSession } from "../src/lite/streaming-session.js";

/** The event types a session sends over its first chunks, given the phase of its first utterance. */
async function firstTypes(phase: number, chunks: number): Promise<string[]> {
  const wss = new WebSocketServer({ port: 0, host: "127.0.0.1" });
  await new Promise((r) => wss.once("listening", r));
  const types: string[] = [];
  wss.on("connection", (ws) => {
    ws.send("{}");
    ws.on("message", (data) => types.push((JSON.parse(data.toString()) as { type: string }).type));
  });
  const url = `ws://127.0.0.1:${(wss.address() as AddressInfo).port}`;
  const session = new StreamingSession(floorSession(url), "10.0.0.1", new RoundTrips(), 1, phase);
  try {
    await session.open();
    vi.useFakeTimers({ toFake: ["setTimeout", "setInterval", "clearTimeout", "clearInterval"] });
    session.stream();
    for (let i = 0; i < chunks; i++) {
      vi.advanceTimersByTime(1_000);
      // Not vi.waitFor: under fake timers it advances them itself.
      const deadline = performance.now() + 10_000;
      while (types.length < i + 1 && performance.now() < deadline) {
        await new Promise((r) => setImmediate(r));
      }
      expect(types).toHaveLength(i + 1);
    }
    return types;
  } finally {
    vi.useRealTimers();
    await session.stop();
    await new Promise((r) => wss.close(r));
  }
}

describe("StreamingSession", () => {
  afterEach(() => vi.useRealTimers());

  it("ends its first utterance after as many chunks as its phase leaves, then every 5", async () => {
    const speak = "agent.speak";
    const end = "agent.speak_end";
    expect(CHUNKS_PER_UTTERANCE).toBe(5);
    expect(await firstTypes(0, 6)).toEqual([speak, speak, speak, speak, end, speak]);
    expect(await firstTypes(3, 7)).toEqual([speak, end, speak, speak, speak, speak, end]);
  });
});
