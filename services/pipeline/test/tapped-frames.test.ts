import type { AvFrame } from "@avatar/media";
import { describe, expect, it } from "vitest";
import { type FrameTap, tappedFrames } from "../src/media/tapped-frames.js";

/** A tap like MediaSession's: listeners get every frame emitted while subscribed. */
function source() {
  const listeners = new Set<(frame: AvFrame) => void>();
  const tap: FrameTap = (listener) => {
    listeners.add(listener);
    return () => listeners.delete(listener);
  };
  const pixels = new Uint8Array(4);
  /** Frames share one pixel buffer, as the renderer's pool does; each is filled with its index. */
  const emit = (index: number) => {
    pixels.fill(index);
    const frame = { index, video: { width: 2, height: 2, data: pixels } } as AvFrame;
    for (const l of listeners) l(frame);
  };
  return { tap, emit, listeners };
}

describe("tappedFrames", () => {
  it("keeps each queued frame's own pixels though the source reuses its buffer", async () => {
    const s = source();
    const stop = new AbortController();
    const frames = tappedFrames(s.tap, { signal: stop.signal });
    const iterator = frames[Symbol.asyncIterator]();
    const first = iterator.next();
    await Promise.resolve();
    for (let i = 1; i <= 3; i++) s.emit(i);
    const seen = [(await first).value, (await iterator.next()).value, (await iterator.next()).value];
    expect(seen.map((f) => f?.video.data[0])).toEqual([1, 2, 3]);
    stop.abort();
  });

  it("yields the tapped frames in order and unsubscribes when the signal aborts", async () => {
    const s = source();
    const stop = new AbortController();
    const frames = tappedFrames(s.tap, { signal: stop.signal });
    const seen: number[] = [];
    const reading = (async () => {
      for await (const frame of frames) seen.push(frame.index);
    })();
    await Promise.resolve();
    for (let i = 0; i < 5; i++) s.emit(i);
    await new Promise((r) => setTimeout(r, 10));
    stop.abort();
    await reading;
    expect(seen).toEqual([0, 1, 2, 3, 4]);
    expect(s.listeners.size).toBe(0);
  });

  it("never holds more than maxQueued frames: the oldest go when the consumer stalls", async () => {
    const s = source();
    const stop = new AbortController();
    const frames = tappedFrames(s.tap, { signal: stop.signal, maxQueued: 3 });
    const iterator = frames[Symbol.asyncIterator]();
    const first = iterator.next(); // subscribes, then waits
    for (let i = 0; i < 10; i++) s.emit(i); // ten frames before the consumer runs again
    const taken = [(await first).value?.index];
    for (let i = 0; i < 2; i++) taken.push((await iterator.next()).value?.index);
    expect(taken).toEqual([7, 8, 9]);
    expect(frames.dropped).toBe(7);
    s.emit(10);
    expect((await iterator.next()).value?.index).toBe(10);
    await iterator.return?.();
    expect(s.listeners.size).toBe(0);
  });

  it("an already aborted signal yields nothing and never subscribes", async () => {
    const s = source();
    const stop = new AbortController();
    stop.abort();
    const seen: AvFrame[] = [];
    for await (const frame of tappedFrames(s.tap, { signal: stop.signal })) seen.push(frame);
    expect(seen).toEqual([]);
    expect(s.listeners.size).toBe(0);
  });
});
