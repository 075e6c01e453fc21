import type { Clock } from "../src/realtime/clock.js";

/** A clock that moves only when told; timers fire in time order as it passes them. */
export class ManualClock implements Clock {
  private t: number;
  private seq = 0;
  private readonly timers: { at: number; seq: number; fn: () => void; live: boolean }[] = [];

  constructor(start = Date.parse("2026-11-23T10:00:00.000Z")) {
    this.t = start;
  }

  now = (): number => this.t;

  after(ms: number, fn: () => void): () => void {
    const timer = { at: this.t + Math.max(0, ms), seq: this.seq++, fn, live: true };
    this.timers.push(timer);
    return () => {
      timer.live = false;
    };
  }

  /** Moves the clock forward by `ms`, firing every timer due on the way at its own time. */
  advance(ms: number): void {
    const target = this.t + ms;
    for (;;) {
      const due = this.timers
        .filter((x) => x.live && x.at <= target)
        .sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (!due) break;
      due.live = false;
      this.t = Math.max(this.t, due.at);
      due.fn();
    }
    this.t = target;
    for (let i = this.timers.length - 1; i >= 0; i--) if (!this.timers[i]?.live) this.timers.splice(i, 1);
  }

  /** Timers still waiting. */
  get pending(): number {
    return this.timers.filter((x) => x.live).length;
  }
}
