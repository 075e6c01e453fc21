import { describe, expect, it } from "vitest";
import { ResendPacing } from "../src/ws/resend-pacing.js";

describe("ResendPacing", () => {
  it("lets a window go out again at most once per interval, doubling while nothing is acknowledged", () => {
    const pacing = new ResendPacing(1_000, 8_000);
    expect(pacing.mayResend(0)).toBe(true);
    const sentAt: number[] = [];
    for (let now = 0; now <= 30_000; now += 100) {
      if (pacing.mayResend(now)) {
        pacing.resent(now);
        sentAt.push(now);
      }
    }
    // 1 s, then 2, 4, 8, 8 ... apart: a worker that is only behind is not flooded.
    expect(sentAt).toEqual([0, 2_000, 6_000, 14_000, 22_000, 30_000]);
  });

  it("is back to its first interval once an acknowledgement arrives", () => {
    const pacing = new ResendPacing(1_000, 8_000);
    pacing.resent(0);
    pacing.resent(2_000);
    expect(pacing.intervalMs).toBe(4_000);
    pacing.acknowledged();
    expect(pacing.intervalMs).toBe(1_000);
    expect(pacing.mayResend(2_999)).toBe(false);
    expect(pacing.mayResend(3_000)).toBe(true);
  });
});
