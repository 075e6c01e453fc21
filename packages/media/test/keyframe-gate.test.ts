import { describe, expect, it } from "vitest";
import { KeyframeGate } from "../src/webrtc/keyframe-gate.js";

function gate(options: { sent?: () => boolean } = {}) {
  let now = 0;
  const asked: number[] = [];
  const g = new KeyframeGate(
    () => {
      const sent = options.sent?.() ?? true;
      if (sent) asked.push(now);
      return sent;
    },
    () => now,
    500,
  );
  return { g, asked, at: (ms: number) => (now = ms) };
}

describe("KeyframeGate", () => {
  it("admits nothing before the first keyframe, and asks for one", () => {
    const { g, asked } = gate();
    expect(g.admit(false)).toBe(false);
    expect(asked).toEqual([0]);
    expect(g.admit(true)).toBe(true);
    expect(g.admit(false)).toBe(true);
  });

  it("after a loss holds frames back until a keyframe, asking again every half second", () => {
    const { g, asked, at } = gate();
    expect(g.admit(true)).toBe(true);
    at(1000);
    g.lost();
    expect(asked).toEqual([1000]);
    at(1040);
    expect(g.admit(false)).toBe(false);
    at(1499);
    g.lost();
    expect(g.admit(false)).toBe(false);
    expect(asked).toEqual([1000]);
    at(1500);
    expect(g.admit(false)).toBe(false);
    expect(asked).toEqual([1000, 1500]);
    at(1540);
    expect(g.admit(true)).toBe(true);
    expect(g.admit(false)).toBe(true);
    expect(asked).toEqual([1000, 1500]);
  });

  it("asks again with the next frame when a request could not be sent", () => {
    let open = false;
    const { g, asked, at } = gate({ sent: () => open });
    g.lost();
    at(40);
    expect(g.admit(false)).toBe(false);
    open = true;
    at(80);
    expect(g.admit(false)).toBe(false);
    expect(asked).toEqual([80]);
  });
});
