import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { checkAudio, durationMs } from "../src/lite/pcm.js";
import { PlayoutClock } from "../src/lite/playout-clock.js";
import { decodeStandardBase64 } from "../src/realtime/standard-base64.js";
import { ManualClock } from "./manual-clock.js";

describe("PlayoutClock", () => {
  it("plays buffered chunks back to back from the start", () => {
    const clock = new ManualClock();
    const t0 = clock.now();
    const playout = new PlayoutClock(clock.now);
    playout.begin(t0, 500);
    clock.advance(100);
    playout.append(500);
    expect(playout.endsAt).toBe(t0 + 1000);
    expect(playout.remainingMs).toBe(900);
  });

  it("stalls on an underrun: a late chunk plays from when it arrives", () => {
    const clock = new ManualClock();
    const t0 = clock.now();
    const playout = new PlayoutClock(clock.now);
    playout.begin(t0, 1000);
    clock.advance(1500);
    expect(playout.remainingMs).toBe(0);
    playout.append(1000);
    expect(playout.endsAt).toBe(t0 + 2500);
  });

  it("keeps real time when chunks of one second arrive every second", () => {
    const clock = new ManualClock();
    const t0 = clock.now();
    const playout = new PlayoutClock(clock.now);
    playout.begin(t0, 1000);
    for (let i = 1; i < 5; i++) {
      clock.advance(1000);
      playout.append(1000);
    }
    expect(playout.endsAt).toBe(t0 + 5000);
  });
});

describe("session audio", () => {
  const b64 = (bytes: number) => Buffer.alloc(bytes, 1).toString("base64");

  it("decodes whole 16-bit samples and knows how long they play (24 kHz)", () => {
    const audio = checkAudio(b64(48_000));
    expect(audio).toEqual({ ok: true, pcm: new Uint8Array(48_000).fill(1) });
    expect(durationMs(48_000)).toBe(1000);
    expect(checkAudio("AAA=")).toEqual({ ok: true, pcm: new Uint8Array(2) });
    // Valid but not what an encoder writes (unused bits set): still accepted.
    expect(checkAudio("AAB=")).toMatchObject({ ok: true, pcm: new Uint8Array([0, 0]) });
    expect(durationMs(4800)).toBe(100);
  });

  it.each([
    [42, "must be a base64 string"],
    [null, "must be a base64 string"],
    ["", "is empty"],
    ["not base64!", "not valid base64"],
    ["AAA", "not valid base64"],
    ["AA AA", "not valid base64"],
    ["AA-_", "not valid base64"],
    ["AAAA\n", "not valid base64"],
    ["AA==AA==", "not valid base64"],
    ["AAA\nAAAA", "not valid base64"],
    ["QQ\u0141=", "not valid base64"],
    ["QUFB\u00c1UFB", "not valid base64"],
    ["A===", "not valid base64"],
    ["AA=A", "not valid base64"],
    ["AAAA", "has 3 bytes"],
    [b64(3), "even number"],
  ])("refuses %j, naming the problem", (value, problem) => {
    const audio = checkAudio(value);
    expect(audio.ok).toBe(false);
    if (!audio.ok) expect(audio.message).toContain(problem);
  });
});

describe("standard base64", () => {
  /** The standard's grammar (RFC 4648 section 4, padded), the reference the native check must match. */
  const STANDARD = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const near = fc.constantFrom(..."=-_ \n\t.!\u00c1\u0141\u4e00\ud83d");
  const symbols = fc.oneof(
    { weight: 12, arbitrary: fc.constantFrom(...alphabet) },
    { weight: 1, arbitrary: near },
  );

  it("accepts exactly what the grammar accepts, and decodes it as Node does", () => {
    fc.assert(
      fc.property(
        fc.array(symbols, { maxLength: 24 }).map((cs) => cs.join("")),
        fc.constantFrom("", "=", "=="),
        (body, pad) => {
          const value = body + pad;
          const decoded = decodeStandardBase64(value);
          expect(decoded !== undefined).toBe(STANDARD.test(value));
          if (decoded) expect(Buffer.from(decoded)).toEqual(Buffer.from(value, "base64"));
        },
      ),
      { numRuns: 5_000 },
    );
  });

  it("takes what an encoder writes, of any length", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        expect(decodeStandardBase64(Buffer.from(bytes).toString("base64"))).toEqual(bytes);
      }),
    );
  });
});
