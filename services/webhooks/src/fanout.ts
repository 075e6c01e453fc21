import { randomUUID } from "node:crypto";
import type { Kysely } from "kysely";
import type { WebhookMessage } from "./messages.js";
import type { WebhooksDatabase } from "./schema.js";
import type { Subscribers } from "./subscribers.js";

/**
 * Puts a message in the outbox of every enabled endpoint of its space that subscribed to its type, due
 * now. A message already there for an endpoint (the same event again) is left as it is. Answers how
 * many deliveries are new.
 */
export async function fanOut(
  db: Kysely<WebhooksDatabase>,
  subscribers: Subscribers,
  message: WebhookMessage,
  now: Date,
): Promise<number> {
  const endpoints = await subscribers.of(message.spaceId, message.type);
  if (endpoints.length === 0) return 0;
  const rows = await db
    .insertInto("deliveries")
    .values(
      endpoints.map((e) => ({
        id: randomUUID(),
        endpoint_id: e,
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
export async function anyoneWants(subscribers: Subscribers, spaceId: string, type: string): Promise<boolean> {
  return (await subscribers.of(spaceId, type)).length > 0;
}
