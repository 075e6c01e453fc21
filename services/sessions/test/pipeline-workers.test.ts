import { randomUUID } from "node:crypto";
import type { Subscription } from "@avatar/bus";
import {
  type AssignSessionRequest,
  AssignSessionRequestSchema,
  AssignSessionResponseSchema,
} from "@avatar/contracts/pipeline";
import { SessionState } from "@avatar/contracts/sessions";
import { realtimeSubjects } from "@avatar/runtime";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  failure,
  type Harness,
  harness,
  ledgerOf,
  newSession,
  openSessionsDb,
  type SessionsTestDb,
} from "./support.js";

/**
 * Starts with pipeline workers: a worker of the queue group claims each start (503 and the escrow given
 * back when none can) and the session records it as its owner (epoch 1). What happens when the owner is
 * lost: takeover.test.ts.
 */

const TIMEOUT_MS = 15_000;
let t: SessionsTestDb;
let h: Harness;
const workers: Subscription[] = [];

beforeAll(async () => {
  t = await openSessionsDb();
  h = harness(t.db, {
    env: {
      SESSIONS_REQUIRE_PIPELINE: "true",
      PIPELINE_ASSIGN_TIMEOUT_MS: "300",
      PIPELINE_ASSIGN_ATTEMPTS: "3",
      PIPELINE_WORKER_TIMEOUT_MS: String(TIMEOUT_MS),
    },
  });
});
afterEach(async () => {
  for (const w of workers.splice(0)) await w.unsubscribe();
  await h.app.liveness.stop();
});
afterAll(async () => {
  await t?.close();
});

/**
 * A worker in the queue group that answers with `workerId` ("" = full); counts what it was asked (the
 * requests themselves in `received`).
 */
function worker(workerId: string, options: { silent?: boolean; received?: AssignSessionRequest[] } = {}) {
  const asked: string[] = [];
  workers.push(
    h.bus.serve(
      realtimeSubjects.assign,
      async (msg) => {
        const request = fromBinary(AssignSessionRequestSchema, msg.data);
        asked.push(request.sessionId);
        options.received?.push(request);
        if (options.silent) await new Promise((r) => setTimeout(r, 1_000));
        return toBinary(AssignSessionResponseSchema, create(AssignSessionResponseSchema, { workerId }));
      },
      { queue: realtimeSubjects.workerQueue },
    ),
  );
  return asked;
}

async function fundedSession() {
  const spaceId = randomUUID();
  await h.client.grantCredits({ spaceId, amount: "10", note: "test" });
  return { spaceId, session: await newSession(h.client, { spaceId }) };
}

describe("pipeline assignment at start", () => {
  it("records the worker that claimed the session", async () => {
    const asked = worker("worker-a");
    const { spaceId, session } = await fundedSession();
    const res = await h.client.startSession({ spaceId, sessionId: session.id });
    expect(res.session).toMatchObject({
      state: SessionState.STARTED,
      pipelineWorkerId: "worker-a",
      pipelineEpoch: 1,
    });
    expect(asked).toEqual([session.id]);
    // A second start is answered without asking again.
    await h.client.startSession({ spaceId, sessionId: session.id });
    expect(asked).toHaveLength(1);
  });

  it("sends the session and its config with the request, as GetSessionConfig answers them", async () => {
    const received: AssignSessionRequest[] = [];
    worker("worker-a", { received });
    const { spaceId, session } = await fundedSession();
    const asked = await h.client.getSessionConfig({ sessionId: session.id });
    await h.client.startSession({ spaceId, sessionId: session.id });
    expect(received).toHaveLength(1);
    expect(received[0]).toMatchObject({ sessionId: session.id, takeover: false });
    expect(received[0]?.session).toMatchObject({ id: session.id, spaceId, state: SessionState.CREATED });
    expect(received[0]?.session).toEqual(asked.session);
    expect(received[0]?.config).toEqual(asked.config);
  });

  it("fails with Unavailable (503) when no worker runs, and gives the escrow back", async () => {
    const { spaceId, session } = await fundedSession();
    const err = await failure(h.client.startSession({ spaceId, sessionId: session.id }));
    expect(err.code).toBe(Code.Unavailable);
    expect(await ledgerOf(t.db, spaceId, session.id)).toEqual([
      ["escrow", -2, null],
      ["escrow_release", 2, null],
    ]);
    const { session: after } = await h.client.getSession({ spaceId, sessionId: session.id });
    expect(after?.state).toBe(SessionState.CREATED);
  });

  it("fails with Unavailable when the worker does not answer in time", async () => {
    worker("slow", { silent: true });
    const { spaceId, session } = await fundedSession();
    expect((await failure(h.client.startSession({ spaceId, sessionId: session.id }))).code).toBe(
      Code.Unavailable,
    );
  });

  it("asks again while the workers asked are full, up to the attempts, then fails", async () => {
    const full = worker("");
    const { spaceId, session } = await fundedSession();
    expect((await failure(h.client.startSession({ spaceId, sessionId: session.id }))).code).toBe(
      Code.Unavailable,
    );
    expect(full).toEqual([session.id, session.id, session.id]);
  });

  it("finds the member of the group that has room", async () => {
    worker("");
    worker("worker-b");
    const { spaceId, session } = await fundedSession();
    const res = await h.client.startSession({ spaceId, sessionId: session.id });
    expect(res.session?.pipelineWorkerId).toBe("worker-b");
  });
});
