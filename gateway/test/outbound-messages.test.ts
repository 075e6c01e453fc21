import { describe, expect, it } from "vitest";
import { OutboundMessages, ResendBudget } from "../src/ws/outbound-messages.js";

const bytes = (n: number) => new Uint8Array(n);

describe("OutboundMessages", () => {
  it("numbers messages from 1 and keeps them until acknowledged", () => {
    const out = new OutboundMessages({ maxBytes: 1_000, maxCount: 10 });
    expect(out.lastSeq).toBe(0);
    expect([1, 2, 3].map(() => out.add(bytes(10), 0).seq)).toEqual([1, 2, 3]);
    out.acknowledge(2);
    expect(out.ackedSeq).toBe(2);
    expect(out.resend(5).map((m) => m.seq)).toEqual([3]);
    // A bogus acknowledgement beyond what was sent changes nothing.
    out.acknowledge(99);
    expect(out.ackedSeq).toBe(2);
    expect(out.size).toBe(1);
  });

  it("says when the oldest message waits too long, and marks a resend as a new sending", () => {
    const out = new OutboundMessages({ maxBytes: 1_000, maxCount: 10 });
    out.add(bytes(1), 100);
    expect(out.overdue(100)).toBe(false);
    expect(out.overdue(101)).toBe(true);
    out.resend(200);
    expect(out.overdue(200)).toBe(false);
    out.acknowledge(1);
    expect(out.overdue(10_000)).toBe(false);
  });

  it("gives up the oldest beyond its limits, moving the acknowledged floor past them", () => {
    const byCount = new OutboundMessages({ maxBytes: 1_000, maxCount: 3 });
    for (let i = 0; i < 3; i++) byCount.add(bytes(1), 0);
    expect(byCount.add(bytes(1), 0)).toEqual({ seq: 4, dropped: 1 });
    expect(byCount.ackedSeq).toBe(1);
    expect(byCount.resend(0).map((m) => m.seq)).toEqual([2, 3, 4]);

    const byBytes = new OutboundMessages({ maxBytes: 100, maxCount: 100 });
    byBytes.add(bytes(60), 0);
    expect(byBytes.add(bytes(60), 0)).toEqual({ seq: 2, dropped: 1 });
    // One message larger than the limit is still kept (and sent): only older ones make room.
    expect(byBytes.add(bytes(500), 0)).toEqual({ seq: 3, dropped: 1 });
    expect(byBytes.size).toBe(1);
  });

  it("gives the number of a message that could not be sent at all to the next one", () => {
    const out = new OutboundMessages({ maxBytes: 1_000, maxCount: 10 });
    out.add(bytes(1), 0);
    const { seq } = out.add(bytes(1), 0);
    out.unsend(seq);
    expect(out.add(bytes(1), 0).seq).toBe(2);
    expect(out.size).toBe(2);
  });

  it("keeps all sockets within the gateway's shared budget, each giving up its own oldest first", () => {
    const shared = new ResendBudget(100);
    const a = new OutboundMessages({ maxBytes: 1_000, maxCount: 100, shared });
    const b = new OutboundMessages({ maxBytes: 1_000, maxCount: 100, shared });
    a.add(bytes(40), 0);
    a.add(bytes(40), 0);
    expect(b.add(bytes(40), 0)).toEqual({ seq: 1, dropped: 0 });
    expect(shared.used).toBe(120);
    // Over the shared budget: the socket that adds gives up its oldest (its newest is always kept).
    expect(b.add(bytes(40), 0)).toEqual({ seq: 2, dropped: 1 });
    expect(shared.used).toBe(120);
    a.acknowledge(2);
    expect(shared.used).toBe(40);
    b.clear();
    expect(shared.used).toBe(0);
    expect(b.size).toBe(0);
  });
});
