import { describe, expect, it } from "vitest";
import { bytesFromSamples } from "../src/audio/pcm.js";
import { EnergyVad, type EnergyVadOptions, type VadEvent } from "../src/vad/energy-vad.js";

const RATE = 24_000;
const FRAME = 240; // the default 10 ms frame
const ms = (value: number) => Math.round((value * RATE) / 1000);

/** A deterministic generator (mulberry32) so every run hears the same noise. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A signal built by adding parts onto a timeline of `totalMs`, then rounded and clipped to 16 bits. */
class Track {
  readonly samples: Float64Array;

  constructor(totalMs: number) {
    this.samples = new Float64Array(ms(totalMs));
  }

  /** Uniform noise of the given peak amplitude over [from, to) samples, shaped by `envelope(t in s)`. */
  noise(
    from: number,
    to: number,
    amplitude: number,
    seed: number,
    envelope: (t: number) => number = () => 1,
  ): this {
    const next = random(seed);
    for (let i = from; i < Math.min(to, this.samples.length); i++) {
      this.samples[i] =
        (this.samples[i] as number) + amplitude * (2 * next() - 1) * envelope((i - from) / RATE);
    }
    return this;
  }

  tone(from: number, to: number, frequency = 1000, amplitude = 8000): this {
    for (let i = from; i < Math.min(to, this.samples.length); i++) {
      this.samples[i] =
        (this.samples[i] as number) + amplitude * Math.sin((2 * Math.PI * frequency * i) / RATE);
    }
    return this;
  }

  /** A quiet room: noise about 70 dB below full scale. */
  background(seed = 1): this {
    return this.noise(0, this.samples.length, 20, seed);
  }

  pcm(): Uint8Array {
    const out = new Int16Array(this.samples.length);
    for (let i = 0; i < out.length; i++)
      out[i] = Math.max(-32768, Math.min(32767, Math.round(this.samples[i] as number)));
    return bytesFromSamples(out);
  }
}

function detect(pcm: Uint8Array, options: EnergyVadOptions = {}, chunkBytes = 960): VadEvent[] {
  const vad = new EnergyVad(options);
  const events: VadEvent[] = [];
  for (let offset = 0; offset < pcm.length; offset += chunkBytes) {
    events.push(...vad.process(pcm.subarray(offset, offset + chunkBytes)));
  }
  return [...events, ...vad.finish()];
}

/** Asserts the events are these types at these true sample offsets, each within one frame. */
function expectBoundaries(events: VadEvent[], expected: [VadEvent["type"], number][]): void {
  expect(events.map((e) => e.type)).toEqual(expected.map(([type]) => type));
  events.forEach((event, i) => {
    const truth = expected[i]?.[1] as number;
    expect(
      Math.abs(event.sampleOffset - truth),
      `${event.type} at ${event.sampleOffset}, truth ${truth}`,
    ).toBeLessThan(FRAME);
  });
}

describe("EnergyVad", () => {
  it("hears nothing in digital silence or in a quiet room", () => {
    expect(detect(new Track(2000).pcm())).toEqual([]);
    expect(detect(new Track(3000).background().pcm())).toEqual([]);
  });

  it("finds a tone burst's start and end within a frame", () => {
    const start = 24_100;
    const end = 36_100;
    const signal = new Track(3000).background().tone(start, end).pcm();
    expectBoundaries(detect(signal), [
      ["speech_started", start],
      ["speech_ended", end],
    ]);
    // Digital silence around it does not change the answer.
    expectBoundaries(detect(new Track(3000).tone(start, end).pcm()), [
      ["speech_started", start],
      ["speech_ended", end],
    ]);
  });

  it("keeps amplitude-modulated, speech-like noise in one segment and finds its edges", () => {
    const start = ms(1000) + 37;
    const end = ms(2200) + 11;
    // A 4 Hz syllable rhythm: the level swings by 14 dB but never falls to the background.
    const syllables = (t: number) => 0.6 + 0.4 * Math.sin(2 * Math.PI * 4 * t);
    const signal = new Track(3500).background(7).noise(start, end, 6000, 42, syllables).pcm();
    expectBoundaries(detect(signal), [
      ["speech_started", start],
      ["speech_ended", end],
    ]);
  });

  it("bridges pauses shorter than the hangover and splits at longer ones", () => {
    // Words of 150 ms with 100 ms gaps: one segment from the first word to the last.
    const words = new Track(3000).background(3);
    const first = ms(500);
    for (let w = 0; w < 4; w++) words.noise(first + ms(250 * w), first + ms(250 * w + 150), 5000, 100 + w);
    const lastEnd = first + ms(250 * 3 + 150);
    expectBoundaries(detect(words.pcm()), [
      ["speech_started", first],
      ["speech_ended", lastEnd],
    ]);

    // A 300 ms pause is bridged with the default 500 ms hangover, an 800 ms one is not.
    const short = new Track(3000).background().tone(ms(500), ms(800)).tone(ms(1100), ms(1400)).pcm();
    expectBoundaries(detect(short), [
      ["speech_started", ms(500)],
      ["speech_ended", ms(1400)],
    ]);
    const long = new Track(4000).background().tone(ms(500), ms(800)).tone(ms(1600), ms(1900)).pcm();
    expectBoundaries(detect(long), [
      ["speech_started", ms(500)],
      ["speech_ended", ms(800)],
      ["speech_started", ms(1600)],
      ["speech_ended", ms(1900)],
    ]);
    // With a 200 ms hangover the 300 ms pause splits too.
    expect(detect(short, { hangoverMs: 200 }).map((e) => e.type)).toEqual([
      "speech_started",
      "speech_ended",
      "speech_started",
      "speech_ended",
    ]);
  });

  it("ignores sounds shorter than the start time", () => {
    const click = new Track(2000).background().tone(ms(500), ms(550), 2000, 20_000).pcm();
    expect(detect(click)).toEqual([]);
    expect(detect(click, { startMs: 40 }).map((e) => e.type)).toEqual(["speech_started", "speech_ended"]);
  });

  it("reports a start once startMs of speech is heard, and an end once hangoverMs of silence is", () => {
    const signal = new Track(3000).background().tone(ms(1000), ms(1600)).pcm();
    const vad = new EnergyVad({ startMs: 150, hangoverMs: 400 });
    const reported: { event: VadEvent; at: number }[] = [];
    for (let offset = 0; offset < signal.length; offset += 2 * FRAME) {
      for (const event of vad.process(signal.subarray(offset, offset + 2 * FRAME)))
        reported.push({ event, at: vad.position });
    }
    expect(reported.map((r) => r.event.type)).toEqual(["speech_started", "speech_ended"]);
    const [started, ended] = reported as [{ event: VadEvent; at: number }, { event: VadEvent; at: number }];
    expect(Math.abs(started.at - started.event.sampleOffset - ms(150))).toBeLessThanOrEqual(FRAME);
    expect(Math.abs(ended.at - ended.event.sampleOffset - ms(400))).toBeLessThanOrEqual(FRAME);
  });

  it("gives the same events however the audio is cut, odd byte counts included", () => {
    const signal = new Track(3000)
      .background(5)
      .noise(ms(700), ms(1900), 4000, 9, (t) => 0.5 + 0.5 * Math.abs(Math.sin(2 * Math.PI * 3 * t)))
      .pcm();
    const whole = detect(signal, {}, signal.length);
    expect(whole.length).toBeGreaterThan(0);
    const cut = random(77);
    const vad = new EnergyVad();
    const events: VadEvent[] = [];
    for (let offset = 0; offset < signal.length; ) {
      const size = 1 + Math.floor(cut() * 3001);
      events.push(...vad.process(signal.subarray(offset, offset + size)));
      offset += size;
    }
    expect([...events, ...vad.finish()]).toEqual(whole);
  });

  it("absorbs steady noise into the floor", () => {
    // Noise from the very start is background: never speech.
    expect(detect(new Track(5000).noise(0, ms(5000), 3000, 11).pcm())).toEqual([]);

    // Noise that switches on in a quiet room sounds like speech at first, until the floor catches up.
    const onset = ms(1000) + 123;
    const signal = new Track(10_000).background().noise(onset, ms(10_000), 3000, 12).pcm();
    const vad = new EnergyVad();
    const events = [...vad.process(signal)];
    expect(events.map((e) => e.type)).toEqual(["speech_started", "speech_ended"]);
    expect(Math.abs((events[0] as VadEvent).sampleOffset - onset)).toBeLessThan(FRAME);
    const endsAfter = ((events[1] as VadEvent).sampleOffset - onset) / RATE;
    expect(endsAfter).toBeGreaterThan(1.5);
    expect(endsAfter).toBeLessThan(6);
    // Uniform noise of peak 3000 is about -25.8 dBFS; the floor follows its quieter frames.
    expect(vad.noiseFloorDb).toBeGreaterThan(-30);
    expect(vad.noiseFloorDb).toBeLessThan(-25);
  });

  it("finish() ends a segment still open where its silence began, or at the end of the audio", () => {
    const vad = new EnergyVad();
    const speech = new Track(1500).background().tone(ms(500), ms(1500)).pcm();
    expect(vad.process(speech).map((e) => e.type)).toEqual(["speech_started"]);
    expect(vad.finish()).toEqual([{ type: "speech_ended", sampleOffset: ms(1500) }]);
    expect(vad.finish()).toEqual([]);

    const trailing = new EnergyVad();
    trailing.process(new Track(1300).background().tone(ms(500), ms(1000)).pcm());
    expectBoundaries(trailing.finish(), [["speech_ended", ms(1000)]]);
  });

  it("takes other frame lengths and sample rates", () => {
    const rate = 16_000;
    const pcm = new Int16Array(rate * 2);
    for (let i = rate / 2; i < rate; i++)
      pcm[i] = Math.round(8000 * Math.sin((2 * Math.PI * 700 * i) / rate));
    const events = detect(bytesFromSamples(pcm), { sampleRate: rate, frameMs: 20 });
    expect(events.map((e) => e.type)).toEqual(["speech_started", "speech_ended"]);
    expect(Math.abs((events[0] as VadEvent).sampleOffset - rate / 2)).toBeLessThan(320);
    expect(Math.abs((events[1] as VadEvent).sampleOffset - rate)).toBeLessThan(320);
  });
});
