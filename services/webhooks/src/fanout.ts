import { randomUUID } from "node:crypto";
import { type Kysely, sql } from "kysely";
import type { WebhookMessage } from "./messages.js";
import type { WebhooksDatabase } from "./schema.js";

/** The enabled endpoints of a space subscribed to an event type. */
function subscribers(db: Kysely<WebhooksDatabase>, spaceId: string, type: string) {
  return db
    .selectFrom("endpoints")
    .select("id")
    .where("space_id", "=", spaceId)
    .where("disabled_at", "is", null)
    .where(sql<boolean>`event_types ? ${type}`);
}

/**
 * Puts a message in the outbox of every enabled endpoint of its space that subscribed to its type, due
 * now. A message already there for an endpoint (the same event again) is left as it is. Answers how
 * many deliveries are new.
 */
export async function fanOut(
  db: Kysely<WebhooksDatabase>,
  message: WebhookMessage,
  now: Date,
): Promise<number> {
  const endpoints = await subscribers(db, message.spaceId, message.type).execute();
  if (endpoints.length === 0) return 0;
  const rows = await db
    .insertInto("deliveries")
    .values(
      endpoints.map((e) => ({
        id: randomUUID(),
        endpoint_id: e.id,
        message_id: message.id,
        event_type: message.type,
        payload: message.body,
        status: "pending" as const,
        created_at: now,
        next_attempt_at: now,
      })),
    )
    .onConflict((oc) => oc.columns(["endpoint_id", "message_id"]).doNothing())
    .returning("id")
    .execute();
  return rows.length;
}

/** Whether any enabled endpoint of the space wants this type (saves work nobody would receive). */
export async function anyoneWants(
  db: Kysely<WebhooksDatabase>,
  spaceId: string,
  type: string,
): Promise<boolean> {
  const row = await subscribers(db, spaceId, type).limit(1).executeTakeFirst();
  return row !== undefined;
}
