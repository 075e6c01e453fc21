import { describe, expect, it } from "vitest";
import { planReads } from "../src/generic-plans.js";

describe("planReads", () => {
  it("names the indexes a plan's scans go through and the tables it reads whole", () => {
    const plan = [
      "Nested Loop  (cost=4.31..20.40 rows=1 width=16)",
      "  ->  Bitmap Heap Scan on deliveries d  (cost=4.16..9.50 rows=4 width=32)",
      "        Recheck Cond: (next_attempt_at <= $1)",
      "        ->  Bitmap Index Scan on deliveries_due  (cost=0.00..4.16 rows=4 width=0)",
      "  ->  Index Scan using endpoints_pkey on endpoints e  (cost=0.15..2.17 rows=1 width=16)",
      "  ->  Index Only Scan using sessions_due_idx on sessions  (cost=0.15..2.17 rows=1 width=16)",
      "  ->  Seq Scan on outbox  (cost=10000000000.00..10000000001.01 rows=1 width=8)",
    ].join("\n");
    expect(planReads(plan)).toEqual({
      indexes: ["deliveries_due", "endpoints_pkey", "sessions_due_idx"],
      seqScans: ["outbox"],
    });
  });

  it("reads a backward index scan, and a plan with no scan reads nothing", () => {
    expect(
      planReads(
        "Index Scan Backward using voice_agents_seq_key on voice_agents  (cost=0.15..52.02 rows=225)",
      ),
    ).toEqual({ indexes: ["voice_agents_seq_key"], seqScans: [] });
    expect(planReads("Result  (cost=0.00..0.01 rows=1 width=4)")).toEqual({ indexes: [], seqScans: [] });
  });
});
