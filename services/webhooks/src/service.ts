import { randomUUID } from "node:crypto";
import type { WebhooksService } from "@avatar/contracts/webhooks";
import {
  invalidRequest,
  isUuid,
  isWebhookEventType,
  notFound,
  pageInfo,
  pageWindow,
  type Sealer,
  WEBHOOK_EVENT_TYPES,
} from "@avatar/runtime";
import type { ServiceImpl } from "@connectrpc/connect";
import { type Kysely, sql } from "kysely";
import { checkEndpointUrl } from "./endpoint-url.js";
import { deliveryToProto, endpointToProto } from "./mapping.js";
import type { WebhooksDatabase } from "./schema.js";
import { newSigningSecret } from "./signature.js";
import type { Subscribers } from "./subscribers.js";

export interface WebhooksServiceDeps {
  db: Kysely<WebhooksDatabase>;
  sealer: Sealer;
  /** Told of every change to a space's endpoints, once committed. */
  subscribers: Pick<Subscribers, "changed">;
  now: () => Date;
  maxEndpoints: number;
}

const MAX_DESCRIPTION = 500;
const endpointNotFound = () => notFound("Webhook endpoint not found", { field: "webhook_id" });

/** The endpoints of a space, and their delivery log. Another space's endpoint is reported as missing. */
export function webhooksService(deps: WebhooksServiceDeps): ServiceImpl<typeof WebhooksService> {
  const { db } = deps;
  const ownEndpoint = async (spaceId: string, endpointId: string) => {
    if (!isUuid(spaceId) || !isUuid(endpointId)) throw endpointNotFound();
    const row = await db
      .selectFrom("endpoints")
      .selectAll()
      .where("id", "=", endpointId.toLowerCase())
      .where("space_id", "=", spaceId.toLowerCase())
      .executeTakeFirst();
    if (!row) throw endpointNotFound();
    return row;
  };

  return {
    async createEndpoint(req) {
      if (!isUuid(req.spaceId)) throw invalidRequest("space_id must be a UUID", { field: "space_id" });
      const url = checkEndpointUrl(req.url);
      const types = [...new Set(req.eventTypes)];
      if (types.length === 0) {
        throw invalidRequest("event_types must name at least one event", { field: "event_types" });
      }
      for (const type of types) {
        if (!isWebhookEventType(type)) {
          throw invalidRequest(
            `unknown event type ${JSON.stringify(type)}; known: ${WEBHOOK_EVENT_TYPES.join(", ")}`,
            {
              field: "event_types",
            },
          );
        }
      }
      if (req.description.length > MAX_DESCRIPTION) {
        throw invalidRequest(`description is longer than ${MAX_DESCRIPTION} characters`, {
          field: "description",
        });
      }
      const spaceId = req.spaceId.toLowerCase();
      const id = randomUUID();
      const secret = newSigningSecret();
      const row = await db.transaction().execute(async (trx) => {
        // One space's creations take turns, so the limit holds under concurrency.
        await sql`select pg_advisory_xact_lock(hashtext(${`webhooks:${spaceId}`}))`.execute(trx);
        const { n } = await trx
          .selectFrom("endpoints")
          .select(sql<string>`count(*)`.as("n"))
          .where("space_id", "=", spaceId)
          .executeTakeFirstOrThrow();
        if (Number(n) >= deps.maxEndpoints) {
          throw invalidRequest(`a space may register at most ${deps.maxEndpoints} webhook endpoints`, {
            reason: "TOO_MANY_ENDPOINTS",
          });
        }
        return trx
          .insertInto("endpoints")
          .values({
            id,
            space_id: spaceId,
            url,
            event_types: JSON.stringify(types),
            description: req.description,
            secret_sealed: deps.sealer.seal(secret, id),
            created_at: deps.now(),
          })
          .returningAll()
          .executeTakeFirstOrThrow();
      });
      deps.subscribers.changed(spaceId);
      return { endpoint: endpointToProto(row), secret };
    },

    async listEndpoints(req) {
      if (!isUuid(req.spaceId)) return { endpoints: [] };
      const rows = await db
        .selectFrom("endpoints")
        .selectAll()
        .where("space_id", "=", req.spaceId.toLowerCase())
        .orderBy("created_at", "desc")
        .orderBy("id")
        .execute();
      return { endpoints: rows.map(endpointToProto) };
    },

    async getEndpoint(req) {
      return { endpoint: endpointToProto(await ownEndpoint(req.spaceId, req.endpointId)) };
    },

    async deleteEndpoint(req) {
      const row = await ownEndpoint(req.spaceId, req.endpointId);
      await db.deleteFrom("endpoints").where("id", "=", row.id).execute();
      deps.subscribers.changed(row.space_id);
      return {};
    },

    async listDeliveries(req) {
      const endpoint = await ownEndpoint(req.spaceId, req.endpointId);
      const window = pageWindow(req.page);
      const [rows, total] = await Promise.all([
        db
          .selectFrom("deliveries")
          .selectAll()
          .where("endpoint_id", "=", endpoint.id)
          .orderBy("seq", "desc")
          .offset(window.offset)
          .limit(window.pageSize)
          .execute(),
        db
          .selectFrom("deliveries")
          .select(sql<string>`count(*)`.as("n"))
          .where("endpoint_id", "=", endpoint.id)
          .executeTakeFirstOrThrow(),
      ]);
      const attempts =
        rows.length === 0
          ? []
          : await db
              .selectFrom("delivery_attempts")
              .selectAll()
              .where(
                "delivery_id",
                "in",
                rows.map((r) => r.id),
              )
              .orderBy("id")
              .execute();
      return {
        deliveries: rows.map((r) =>
          deliveryToProto(
            r,
            attempts.filter((a) => a.delivery_id === r.id),
          ),
        ),
        page: pageInfo(window, Number(total.n)),
      };
    },
  };
}
