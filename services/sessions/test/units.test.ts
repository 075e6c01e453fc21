import { describe, expect, it } from "vitest";
import { creditRate, formatCredits, parseCreditAmount } from "../src/ledger.js";
import { durationSeconds } from "../src/mapping.js";
import { nextDueStep, type TimerFields } from "../src/timers.js";

/** The pure parts, called directly: timer order, rates, credit amounts, durations. */

const T = Date.parse("2026-11-22T10:00:00.000Z");
const at = (ms: number) => new Date(T + ms);

const started = (over: Partial<TimerFields> = {}): TimerFields => ({
  state: "STARTED",
  start_deadline_at: null,
  idle_deadline_at: at(300_000),
  max_end_at: at(3_600_000),
  next_charge_at: at(60_000),
  charged_minutes: 1,
  worker_deadline_at: null,
  worker_seen_at: null,
  takeover_deadline_at: null,
  ...over,
});

describe("nextDueStep", () => {
  it("offers a session whose worker's lease ran out to the other workers, after charging served minutes", () => {
    const row = started({ worker_deadline_at: at(75_000), worker_seen_at: at(69_000) });
    expect(nextDueStep(row, at(74_999))).toMatchObject({ kind: "charge", minuteIndex: 1 });
    const charged = { ...row, next_charge_at: at(120_000), charged_minutes: 2 };
    expect(nextDueStep(charged, at(74_999))).toBeUndefined();
    expect(nextDueStep(charged, at(200_000))).toEqual({ kind: "worker_lost", at: at(75_000) });
  });

  it("charges a minute of a session a worker runs once the worker was heard serving after it began", () => {
    const row = started({ worker_deadline_at: at(66_000), worker_seen_at: at(58_000) });
    expect(nextDueStep(row, at(61_000))).toBeUndefined();
    expect(nextDueStep({ ...row, worker_seen_at: at(60_000) }, at(61_000))).toBeUndefined();
    expect(nextDueStep({ ...row, worker_seen_at: at(60_001) }, at(61_000))).toEqual({
      kind: "charge",
      minuteIndex: 1,
      at: at(60_000),
    });
  });

  it("ends a lost session nobody took at the takeover deadline, as of when it was last served", () => {
    const row = started({ takeover_deadline_at: at(90_000), worker_seen_at: at(59_000) });
    expect(nextDueStep(row, at(89_999))).toBeUndefined();
    // The minute that began after it was last served is not charged.
    expect(nextDueStep(row, at(90_000))).toEqual({
      kind: "end",
      reason: "SERVER_ERROR",
      at: at(59_000),
      vouches: false,
    });
  });

  it("charges no minute past an idle deadline it may not judge yet", () => {
    const row = started({ idle_deadline_at: at(90_000), next_charge_at: at(60_000) });
    const paused = { judge: false };
    expect(nextDueStep(row, at(200_000), paused)).toMatchObject({ kind: "charge", minuteIndex: 1 });
    const charged = { ...row, next_charge_at: at(120_000), charged_minutes: 2 };
    expect(nextDueStep(charged, at(200_000), paused)).toBeUndefined();
    expect(nextDueStep(charged, at(200_000))).toMatchObject({ kind: "end", reason: "IDLE_TIMEOUT" });
  });

  it("judges neither idleness nor leases nor takeovers while judgment is paused (an outage)", () => {
    const paused = { judge: false };
    const idle = started({ idle_deadline_at: at(10_000), next_charge_at: null });
    expect(nextDueStep(idle, at(20_000), paused)).toBeUndefined();
    const lease = started({ worker_deadline_at: at(10_000), worker_seen_at: at(0), next_charge_at: null });
    expect(nextDueStep(lease, at(20_000), paused)).toBeUndefined();
    const lost = started({ takeover_deadline_at: at(10_000), worker_seen_at: at(0) });
    expect(nextDueStep(lost, at(20_000), paused)).toBeUndefined();
    // The maximum duration is no judgment: it ends the session, and vouches for the minutes before it.
    const max = started({ max_end_at: at(90_000), worker_seen_at: at(30_000) });
    expect(nextDueStep(max, at(95_000), paused)).toMatchObject({ kind: "charge", minuteIndex: 1 });
    const charged = { ...max, next_charge_at: at(120_000), charged_minutes: 2 };
    expect(nextDueStep(charged, at(95_000), paused)).toMatchObject({ kind: "end", vouches: true });
  });

  it("has nothing due before the first timer", () => {
    expect(nextDueStep(started(), at(59_999))).toBeUndefined();
  });

  it("charges a minute only once it has begun (strictly after its start)", () => {
    expect(nextDueStep(started(), at(60_000))).toBeUndefined();
    expect(nextDueStep(started(), at(60_001))).toEqual({ kind: "charge", minuteIndex: 1, at: at(60_000) });
  });

  it("ends before charging a minute that begins at or after the end", () => {
    const idle = started({ idle_deadline_at: at(60_000) });
    expect(nextDueStep(idle, at(90_000))).toEqual({
      kind: "end",
      reason: "IDLE_TIMEOUT",
      at: at(60_000),
      vouches: true,
    });
    const max = started({ max_end_at: at(50_000) });
    expect(nextDueStep(max, at(90_000))).toEqual({
      kind: "end",
      reason: "MAX_DURATION_REACHED",
      at: at(50_000),
      vouches: true,
    });
  });

  it("charges the minutes that began before a later end first, oldest first", () => {
    const row = started({ idle_deadline_at: at(200_000) });
    expect(nextDueStep(row, at(500_000))).toMatchObject({ kind: "charge", minuteIndex: 1 });
  });

  it("lets the max duration win a tie with the idle deadline", () => {
    const row = started({ idle_deadline_at: at(100_000), max_end_at: at(100_000), next_charge_at: null });
    expect(nextDueStep(row, at(100_000))).toMatchObject({ reason: "MAX_DURATION_REACHED" });
  });

  it("reaps a CREATED session at its start deadline and leaves ended ones alone", () => {
    const created: TimerFields = { ...started(), state: "CREATED", start_deadline_at: at(600_000) };
    expect(nextDueStep(created, at(599_999))).toBeUndefined();
    expect(nextDueStep(created, at(600_000))).toEqual({
      kind: "end",
      reason: "ZOMBIE_SESSION_REAP",
      at: at(600_000),
      vouches: false,
    });
    expect(nextDueStep({ ...started(), state: "ENDED" }, at(10_000_000))).toBeUndefined();
  });

  it("never charges a session without a charge timer (sandbox)", () => {
    const sandbox = started({ next_charge_at: null, max_end_at: at(60_000) });
    expect(nextDueStep(sandbox, at(59_000))).toBeUndefined();
    expect(nextDueStep(sandbox, at(60_000))).toMatchObject({ kind: "end", reason: "MAX_DURATION_REACHED" });
  });
});

describe("credits", () => {
  it("rates FULL and embed sessions at 2, LITE at 1, sandbox at 0", () => {
    expect(creditRate("FULL", "API", false)).toBe(2);
    expect(creditRate("LITE", "API", false)).toBe(1);
    expect(creditRate("LITE", "EMBED", false)).toBe(2);
    expect(creditRate("FULL", "DEMO", true)).toBe(0);
  });

  it("formats stored decimals without trailing zeros", () => {
    expect(formatCredits("118.5000")).toBe("118.5");
    expect(formatCredits("100.0000")).toBe("100");
    expect(formatCredits("-2.0000")).toBe("-2");
    expect(formatCredits("0")).toBe("0");
  });

  it("accepts positive decimals with at most 4 decimals", () => {
    expect(parseCreditAmount(" 010.50 ")).toBe("10.50");
    expect(parseCreditAmount("0.0001")).toBe("0.0001");
    for (const bad of ["0", "0.0", "-1", "1.00001", "1e3", "", ".5", "5.", "NaN", "12345678901234567"]) {
      expect(parseCreditAmount(bad), bad).toBeUndefined();
    }
  });
});

describe("durationSeconds", () => {
  it("counts whole seconds from start to end, or to now, and 0 before the start", () => {
    expect(durationSeconds({ started_at: null, ended_at: null }, at(5000))).toBe(0);
    expect(durationSeconds({ started_at: at(0), ended_at: at(1999) }, at(9999))).toBe(1);
    expect(durationSeconds({ started_at: at(0), ended_at: null }, at(61_500))).toBe(61);
  });
});
