import { randomUUID } from "node:crypto";
import { SessionConfigSchema, SessionMode } from "@avatar/contracts/common";
import { type CreateSessionRequest, SessionsService } from "@avatar/contracts/sessions";
import { callErrorOf, errorDetailOf, notFound, silentLogger } from "@avatar/runtime";
import { create } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  createClient,
  createRouterTransport,
  type ServiceImpl,
} from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { batchedSessionCreation } from "../src/session-creations.js";

/** The mints of one turn create their sessions in one CreateSessionsBatch call, each failing on its own. */

const REFUSED_SPACE = "dddddddd-0000-4000-8000-000000000004";

/** What a sessions service refuses: a creation in REFUSED_SPACE, naming the field. */
function createOne(req: CreateSessionRequest): void {
  if (req.spaceId === REFUSED_SPACE) throw notFound("Space not found", { field: "space_id" });
}

/** A sessions service double over Connect that records the calls it gets. */
function sessionsDouble(impl: Partial<ServiceImpl<typeof SessionsService>>) {
  const calls: string[] = [];
  const transport = createRouterTransport(({ service }) =>
    service(SessionsService, {
      ...impl,
      async createSession(req) {
        calls.push("createSession");
        createOne(req);
        return {};
      },
      ...(impl.createSessionsBatch
        ? {
            createSessionsBatch: (req, ctx) => {
              calls.push(`createSessionsBatch x${req.sessions.length}`);
              return impl.createSessionsBatch?.(req, ctx) ?? { outcomes: [] };
            },
          }
        : {}),
    }),
  );
  return { client: createClient(SessionsService, transport), calls };
}

const batchImpl: Partial<ServiceImpl<typeof SessionsService>> = {
  async createSessionsBatch(req) {
    return {
      outcomes: req.sessions.map((item) => {
        try {
          createOne(item);
          return { sessionId: item.sessionId };
        } catch (err) {
          return { sessionId: item.sessionId, error: callErrorOf(err, silentLogger, "/test") };
        }
      }),
    };
  },
};

const request = (spaceId = randomUUID()) => ({
  sessionId: randomUUID(),
  spaceId,
  config: create(SessionConfigSchema, { mode: SessionMode.LITE, avatarId: randomUUID() }),
  maxSessionDuration: 600,
});

describe("batched session creation", () => {
  it("sends the creations of one turn in one call and fails only the one refused, with its field", async () => {
    const { client, calls } = sessionsDouble(batchImpl);
    const createSession = batchedSessionCreation(client);
    const outcomes = await Promise.allSettled(
      [request(), request(REFUSED_SPACE), request()].map((r) => createSession(r)),
    );
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    const err = ConnectError.from((outcomes[1] as PromiseRejectedResult).reason);
    expect([err.code, err.rawMessage, errorDetailOf(err)?.field]).toEqual([
      Code.NotFound,
      "Space not found",
      "space_id",
    ]);
    expect(calls).toEqual(["createSessionsBatch x3"]);
  });

  it("makes one CreateSession per creation when the sessions service does not know the batch call", async () => {
    const { client, calls } = sessionsDouble({});
    const createSession = batchedSessionCreation(client);
    const outcomes = await Promise.allSettled(
      [request(), request(REFUSED_SPACE)].map((r) => createSession(r)),
    );
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected"]);
    expect(ConnectError.from((outcomes[1] as PromiseRejectedResult).reason).code).toBe(Code.NotFound);
    expect(calls).toEqual(["createSession", "createSession"]);
  });
});
