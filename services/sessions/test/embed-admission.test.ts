import { randomUUID } from "node:crypto";
import { errorDetailOf } from "@avatar/runtime";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  API_KEY_ID,
  config,
  failure,
  type Harness,
  harness,
  openSessionsDb,
  type SessionsTestDb,
} from "./support.js";

/** An embed visitor's session is created only within the embed's limits and with credits for a start. */

let t: SessionsTestDb;
let h: Harness;

beforeAll(async () => {
  t = await openSessionsDb();
  h = harness(t.db);
});
afterAll(async () => {
  await t?.close();
});

async function funded(amount = "100"): Promise<string> {
  const spaceId = randomUUID();
  await h.client.grantCredits({ spaceId, amount, note: "test" });
  return spaceId;
}

const visitor = (
  spaceId: string,
  embedId: string,
  limits = { maxConcurrentSessions: 2, maxSessionsPerHour: 5 },
) =>
  h.client.createSession({
    sessionId: randomUUID(),
    spaceId,
    apiKeyId: API_KEY_ID,
    config: config({ embedId }),
    maxSessionDuration: 600,
    embedAdmission: limits,
  });

describe("embed admission", () => {
  it("lets exactly max_concurrent_sessions through when visitors arrive at once", async () => {
    const spaceId = await funded();
    const embedId = randomUUID();
    const results = await Promise.allSettled(Array.from({ length: 6 }, () => visitor(spaceId, embedId)));
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(2);
    const refused = results.flatMap((r) => (r.status === "rejected" ? [r.reason] : []));
    for (const err of refused) {
      expect(err.code).toBe(Code.ResourceExhausted);
      expect(errorDetailOf(err)?.reason).toBe("EMBED_BUSY");
    }
  });

  it("counts a minted session that was not started only for a minute, and an ended one not at all", async () => {
    const spaceId = await funded();
    const embedId = randomUUID();
    const first = (await visitor(spaceId, embedId)).session;
    await visitor(spaceId, embedId);
    expect(errorDetailOf(await failure(visitor(spaceId, embedId)))?.reason).toBe("EMBED_BUSY");
    await h.client.endSession({ sessionId: first?.id ?? "" });
    await visitor(spaceId, embedId);
    h.clock.advance(61_000);
    await visitor(spaceId, embedId);
  });

  it("refuses beyond max_sessions_per_hour, and again after the hour", async () => {
    const spaceId = await funded();
    const embedId = randomUUID();
    const limits = { maxConcurrentSessions: 100, maxSessionsPerHour: 2 };
    await visitor(spaceId, embedId, limits);
    await visitor(spaceId, embedId, limits);
    expect(errorDetailOf(await failure(visitor(spaceId, embedId, limits)))?.reason).toBe(
      "EMBED_HOURLY_LIMIT",
    );
    h.clock.advance(3_600_001);
    await visitor(spaceId, embedId, limits);
  });

  it("creates no session when the space cannot pay the first minute (sandbox needs none)", async () => {
    const spaceId = randomUUID();
    const embedId = randomUUID();
    const err = await failure(visitor(spaceId, embedId));
    expect(err.code).toBe(Code.ResourceExhausted);
    expect(errorDetailOf(err)?.reason).toBe("INSUFFICIENT_CREDITS");
    const listed = await h.client.listSessions({ spaceId, embedId });
    expect(listed.sessions).toEqual([]);
    const sandbox = await h.client.createSession({
      sessionId: randomUUID(),
      spaceId,
      apiKeyId: API_KEY_ID,
      config: config({ embedId, isSandbox: true }),
      maxSessionDuration: 60,
      embedAdmission: { maxConcurrentSessions: 1, maxSessionsPerHour: 1 },
    });
    expect(sandbox.session?.id).toBeDefined();
  });

  it("answers a retried create of an admitted session instead of counting it again", async () => {
    const spaceId = await funded();
    const embedId = randomUUID();
    const request = {
      sessionId: randomUUID(),
      spaceId,
      apiKeyId: API_KEY_ID,
      config: config({ embedId }),
      maxSessionDuration: 600,
      embedAdmission: { maxConcurrentSessions: 1, maxSessionsPerHour: 1 },
    };
    const once = await h.client.createSession(request);
    const again = await h.client.createSession(request);
    expect(again.session?.id).toBe(once.session?.id);
  });
});
