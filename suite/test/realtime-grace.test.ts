import { SessionEndReason, SessionState } from "@avatar/contracts/sessions";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EventClient } from "./realtime-client.js";
import { startedLite } from "./realtime-support.js";
import { eventually, grant } from "./sessions-support.js";
import { startTestSuite, type TestSuite } from "./support.js";

/**
 * The grace periods of the pipeline, shortened through the environment: a session nobody connects to,
 * or whose client leaves and does not come back, ends with USER_DISCONNECTED (ENDED: its billing stops).
 */

let suite: TestSuite;

beforeAll(async () => {
  suite = await startTestSuite({
    env: { PIPELINE_CONNECT_GRACE_MS: "1000", PIPELINE_DISCONNECT_GRACE_MS: "1000", SESSIONS_TICK_MS: "100" },
  });
  await grant(suite, "1000");
});
afterAll(async () => {
  await suite?.stop();
});

async function endedSession(sessionId: string) {
  return eventually(async () => {
    const { session } = await suite.clients.sessions.getSession({ spaceId: suite.spaceId, sessionId });
    expect(session?.state).toBe(SessionState.ENDED);
    return session;
  }, 20_000);
}

describe("grace periods", () => {
  it("ends a session no client ever connects to with USER_DISCONNECTED", async () => {
    const session = await startedLite(suite);
    const ended = await endedSession(session.session_id);
    expect(ended?.endReason).toBe(SessionEndReason.USER_DISCONNECTED);
  });

  it("ends a session whose client left and did not come back with USER_DISCONNECTED", async () => {
    const session = await startedLite(suite);
    const client = await EventClient.connect(session.ws_url);
    await client.next("session.state_updated", (e) => e.state === "connected");
    const closedAt = Date.now();
    await client.close();
    const ended = await endedSession(session.session_id);
    expect(ended?.endReason).toBe(SessionEndReason.USER_DISCONNECTED);
    // It ended after the grace period, not at once.
    expect(timestampMs(defined(ended?.endedAt)) - closedAt).toBeGreaterThanOrEqual(900);
  });
});

function defined<T>(value: T | undefined): T {
  if (value === undefined) throw new Error("missing value");
  return value;
}
