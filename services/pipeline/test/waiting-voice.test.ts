import { bytesFromSamples } from "@avatar/providers";
import { describe, expect, it } from "vitest";
import { SampleQueue } from "../src/media/sample-queue.js";
import { WaitingVoice } from "../src/media/waiting-voice.js";

/** `count` samples numbered from `first` (wrapping within 16 bits), as PCM bytes. */
function numbered(first: number, count: number): Uint8Array {
  return bytesFromSamples(Int16Array.from({ length: count }, (_, i) => ((first + i) % 30_000) - 15_000));
}
const expected = (first: number, count: number) =>
  Array.from({ length: count }, (_, i) => ((first + i) % 30_000) - 15_000);

describe("SampleQueue", () => {
  it("gives back what was pushed, in order, across moves to the front and growth", () => {
    const queue = new SampleQueue();
    let pushed = 0;
    let dropped = 0;
    // Pushes and drops of uneven sizes, so that the queued samples move to the front and the buffer grows.
    const sizes = [7, 24_000, 13, 30_001, 5, 48_000, 1, 24_000, 999];
    for (const [i, size] of sizes.entries()) {
      queue.push(numbered(pushed, size));
      pushed += size;
      const drop = i % 2 === 0 ? Math.floor(queue.length / 2) : queue.length - 3;
      queue.drop(drop);
      dropped += drop;
      expect(queue.length).toBe(pushed - dropped);
      expect([...queue.copy(0, queue.length)]).toEqual(expected(dropped, pushed - dropped));
    }
    expect([...queue.copy(1, 2)]).toEqual(expected(dropped + 1, 2));
    // Cut to what is queued.
    expect(queue.copy(queue.length - 1, 10).length).toBe(1);
    expect(queue.copy(queue.length + 5, 10).length).toBe(0);
  });

  it("makes no new buffer while audio plays as fast as it comes", () => {
    let buffers = 0;
    const queue = new SampleQueue((samples) => {
      buffers++;
      return new Int16Array(samples);
    });
    const second = numbered(0, 24_000);
    queue.push(second);
    queue.push(second);
    const afterFirstTwo = buffers;
    for (let i = 0; i < 100; i++) {
      queue.drop(24_000);
      queue.push(second);
    }
    expect(buffers).toBe(afterFirstTwo);
    expect(queue.length).toBe(48_000);
    expect(queue.capacity).toBe(48_000);
  });

  it("gives back the room of a long burst once it has played, and refuses half a sample", () => {
    const queue = new SampleQueue();
    expect(queue.capacity).toBe(0);
    queue.push(numbered(0, 24_000 * 30));
    expect(queue.capacity).toBe(24_000 * 30);
    queue.drop(24_000 * 30);
    expect(queue.capacity).toBe(0);

    queue.push(numbered(0, 10));
    expect(() => queue.push(new Uint8Array(3))).toThrow(RangeError);
    expect([...queue.copy(0, 100)]).toEqual(expected(0, 10));
  });
});

describe("WaitingVoice", () => {
  it("hands over what is left to play, the playing chunk cut where it is, with its phonemes moved", () => {
    let now = 1_000;
    const voice = new WaitingVoice(() => now);
    voice.push(numbered(0, 2_400)); // 100 ms: plays 1000-1100
    voice.push(numbered(2_400, 2_400), [
      { phoneme: "a", startMs: 0, durationMs: 40 },
      { phoneme: "b", startMs: 40, durationMs: 60 },
    ]); // 1100-1200
    voice.flush();
    voice.push(numbered(4_800, 1_200)); // 50 ms: 1200-1250
    now = 1_150;

    const unplayed = voice.takeUnplayed();
    expect(unplayed.map((c) => c.samples.length)).toEqual([1_200, 1_200]);
    expect([...(unplayed[0]?.samples ?? [])]).toEqual(expected(3_600, 1_200));
    expect(unplayed[0]?.phonemes).toEqual([{ phoneme: "b", startMs: 0, durationMs: 60 }]);
    expect(unplayed[0]?.last).toBe(true);
    expect([...(unplayed[1]?.samples ?? [])]).toEqual(expected(4_800, 1_200));
    expect(unplayed[1]?.last).toBe(false);
    // Emptied by the hand-over.
    expect(voice.takeUnplayed()).toEqual([]);
  });

  it("plays a chunk after what is queued, or now after a pause, and forgets what has played", () => {
    let now = 0;
    const voice = new WaitingVoice(() => now);
    voice.push(numbered(0, 24_000)); // 0-1000
    now = 2_500;
    voice.push(numbered(24_000, 2_400)); // after the pause: 2500-2600
    voice.push(numbered(26_400, 2_400)); // 2600-2700
    now = 2_650;
    const unplayed = voice.takeUnplayed();
    expect(unplayed.map((c) => [...c.samples])).toEqual([expected(26_400 + 1_200, 1_200)]);

    // Half a sample is refused before anything is queued: what waits is unchanged.
    voice.push(numbered(0, 2_400)); // 2650-2750
    expect(() => voice.push(new Uint8Array(3))).toThrow(RangeError);
    expect(voice.takeUnplayed().map((c) => [...c.samples])).toEqual([expected(0, 2_400)]);

    voice.push(numbered(0, 2_400));
    voice.clear();
    expect(voice.takeUnplayed()).toEqual([]);
  });
});
