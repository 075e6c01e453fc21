import { type Bus, NoRespondersError, RequestTimeoutError } from "@avatar/bus";
import { AssignSessionRequestSchema, AssignSessionResponseSchema } from "@avatar/contracts/pipeline";
import { type Logger, realtimeSubjects } from "@avatar/runtime";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { readConfig, type StartPreparation } from "./lifecycle.js";
import { sessionToProto } from "./mapping.js";
import type { SessionRow } from "./schema.js";
import type { SessionSettings } from "./settings.js";

const noWorker = (why: string) =>
  new ConnectError(`No pipeline worker is available (${why})`, Code.Unavailable);

/**
 * The step before a start completes (and the offer of a running session whose worker was lost): a
 * pipeline worker claims the session. The request goes to the
 * workers' queue group, so exactly one member gets it; a full member answers with an empty worker id
 * and the request is made again (another member may get it), up to PIPELINE_ASSIGN_ATTEMPTS times.
 * No worker at all, a timeout or only full workers make the start fail with Unavailable (503). The
 * request carries the session and its config (as GetSessionConfig answers them), so the worker need not
 * ask for them.
 */
export function pipelineAssigner(
  bus: Bus,
  settings: SessionSettings,
  log: Logger,
  now: () => Date,
): (session: SessionRow, options?: { takeover?: boolean }) => Promise<StartPreparation> {
  return async (session, options = {}) => {
    const request = toBinary(
      AssignSessionRequestSchema,
      create(AssignSessionRequestSchema, {
        sessionId: session.id,
        takeover: options.takeover ?? false,
        session: sessionToProto(session, now()),
        config: readConfig(session),
      }),
    );
    for (let attempt = 1; attempt <= settings.PIPELINE_ASSIGN_ATTEMPTS; attempt++) {
      let reply: Uint8Array;
      try {
        reply = await bus.request(realtimeSubjects.assign, request, {
          timeoutMs: settings.PIPELINE_ASSIGN_TIMEOUT_MS,
        });
      } catch (err) {
        if (err instanceof NoRespondersError) throw noWorker("none is running");
        if (err instanceof RequestTimeoutError) throw noWorker("no answer in time");
        log.warn("pipeline assignment failed", { sessionId: session.id, err });
        throw noWorker("bus unavailable");
      }
      const { workerId } = fromBinary(AssignSessionResponseSchema, reply);
      if (workerId) return { workerId };
    }
    log.warn("every pipeline worker asked was full", { sessionId: session.id });
    throw noWorker("all workers are full");
  };
}
