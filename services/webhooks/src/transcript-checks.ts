import type { SessionsService } from "@avatar/contracts/sessions";
import type { Logger } from "@avatar/runtime";
import { type Client, Code, ConnectError } from "@connectrpc/connect";
import type { Kysely } from "kysely";
import { fanOut } from "./fanout.js";
import { transcriptReady } from "./messages.js";
import type { WebhooksDatabase } from "./schema.js";
import type { Subscribers } from "./subscribers.js";

const RETRY_MS = 10_000;

/**
 * session.transcript_ready: for each ended session whose settle time has come, the sessions service is
 * asked for its transcript; one with entries is announced. A sessions service that does not answer is
 * asked again later; a session it no longer knows is dropped.
 */
export async function runTranscriptChecks(deps: {
  db: Kysely<WebhooksDatabase>;
  sessions: Pick<Client<typeof SessionsService>, "getTranscript">;
  subscribers: Subscribers;
  now: () => Date;
  log: Logger;
}): Promise<number> {
  const now = deps.now();
  return deps.db.transaction().execute(async (trx) => {
    const due = await trx
      .selectFrom("transcript_checks")
      .selectAll()
      .where("due_at", "<=", now)
      .orderBy("due_at")
      .limit(20)
      .forUpdate()
      .skipLocked()
      .execute();
    let announced = 0;
    for (const check of due) {
      let entries: number;
      try {
        const res = await deps.sessions.getTranscript({
          spaceId: check.space_id,
          sessionId: check.session_id,
        });
        entries = res.entries.length;
      } catch (err) {
        if (err instanceof ConnectError && err.code === Code.NotFound) entries = 0;
        else {
          deps.log.warn("transcript check failed; trying again later", { sessionId: check.session_id, err });
          await trx
            .updateTable("transcript_checks")
            .set({ due_at: new Date(now.getTime() + RETRY_MS) })
            .where("session_id", "=", check.session_id)
            .execute();
          continue;
        }
      }
      if (entries > 0) {
        const message = transcriptReady(
          { id: check.session_id, spaceId: check.space_id, endedAt: check.ended_at },
          entries,
        );
        announced += await fanOut(trx, deps.subscribers, message, now);
      }
      await trx.deleteFrom("transcript_checks").where("session_id", "=", check.session_id).execute();
    }
    return announced;
  });
}
