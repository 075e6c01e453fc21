import { type Bus, createMemoryBus } from "@avatar/bus";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { cli } from "./support.js";

/** `avatarctl deadletter`: what consumers gave up on, listed and replayed, on an in-process bus. */

let bus: Bus;
const handled: string[] = [];
let healed = false;

beforeEach(async () => {
  bus = createMemoryBus({ logger: () => {} });
  handled.length = 0;
  healed = false;
  await bus.consumeDurable(
    "events.sessions.ended",
    "memory",
    (m) => {
      if (!healed) throw new Error("sessions service unavailable");
      handled.push(new TextDecoder().decode(m.data));
    },
    { retryDelayMs: 1, maxDeliver: 2 },
  );
});
afterEach(async () => {
  await bus.close();
});

async function deadLetters(count: number): Promise<{ seq: number; consumer: string; error: string }[]> {
  for (let i = 0; i < 500; i++) {
    const listed = await cli(["deadletter", "list", "--json"], {}, bus);
    const letters = JSON.parse(listed.stdout);
    if (letters.length === count) return letters;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`no ${count} dead letters`);
}

describe("deadletter", () => {
  it("lists what a consumer gave up on, and replays it once the cause is fixed", async () => {
    await bus.publishDurable("events.sessions.ended", new TextEncoder().encode("s-1"), { msgId: "s-1" });
    await bus.publishDurable("events.sessions.ended", new TextEncoder().encode("s-2"), { msgId: "s-2" });
    const letters = await deadLetters(2);
    expect(letters).toMatchObject([
      {
        consumer: "memory",
        subject: "events.sessions.ended",
        deliveries: 2,
        error: "sessions service unavailable",
      },
      { consumer: "memory" },
    ]);
    const table = await cli(["deadletter", "list", "--consumer", "memory"], {}, bus);
    expect(table.stdout.split("\n")[0]).toMatch(/^SEQ\s+CONSUMER\s+SUBJECT\s+DELIVERIES\s+DEAD_AT\s+ERROR$/);
    expect((await cli(["deadletter", "list", "--consumer", "other", "--json"], {}, bus)).stdout).toBe("[]\n");

    healed = true;
    const one = await cli(["deadletter", "replay", "--seq", String(letters[0]?.seq), "--json"], {}, bus);
    expect(JSON.parse(one.stdout)).toEqual({ replayed: [letters[0]?.seq], missing: [] });
    const rest = await cli(["deadletter", "replay", "--all"], {}, bus);
    expect(rest.stdout).toBe(`replayed 1 dead letter(s): ${letters[1]?.seq}\n`);
    for (let i = 0; i < 200 && handled.length < 2; i++) await new Promise((r) => setTimeout(r, 10));
    expect(handled.sort()).toEqual(["s-1", "s-2"]);
    expect(await deadLetters(0)).toEqual([]);
    const again = await cli(["deadletter", "replay", "--seq", String(letters[0]?.seq)], {}, bus);
    expect(again.stderr).toContain("no dead letter at");
  });

  it("refuses unclear arguments, and needs a NATS server when none is given", async () => {
    for (const argv of [
      ["deadletter", "replay"],
      ["deadletter", "replay", "--all", "--seq", "3"],
      ["deadletter", "replay", "--seq", "x"],
      ["deadletter", "list", "--limit", "0"],
    ]) {
      const result = await cli(argv, {}, bus);
      expect(result.code, argv.join(" ")).toBe(2);
    }
    const noBus = await cli(["deadletter", "list"], {});
    expect(noBus.code).toBe(2);
    expect(noBus.stderr).toContain("pass --nats-url or set NATS_URL");
  });
});
