import { WEBHOOK_EVENT_TYPES } from "@avatar/runtime";
import type { RequestContext, RouteResult } from "../http/route.js";
import { paginated } from "../present/paginated.js";
import { presentDelivery, presentEndpoint } from "../present/webhooks.js";
import * as s from "../schema/index.js";
import { pageQuery, pageRequest } from "./paging.js";
import { spaceOf } from "./principal.js";

/**
 * Webhook endpoints of the space: signed (Standard Webhooks) notices of session.started, session.ended,
 * session.transcript_ready and memory.created. The signing secret is shown once, in the creation answer.
 */

export const createWebhookBody = s.object("CreateWebhookRequest", {
  url: s
    .httpUrl()
    .describe("Where the events are POSTed: http(s), no user info, no fragment; public addresses only"),
  event_types: s.array(s.enumOf(WEBHOOK_EVENT_TYPES, { name: "WebhookEventTypeEnum" }), {
    minItems: 1,
    maxItems: WEBHOOK_EVENT_TYPES.length,
  }),
  description: s.string({ maxLength: 500 }).optional(),
});

export const webhookPath = s.path({ webhook_id: s.uuid() });
export const deliveriesQuery = s.query({ ...pageQuery });

type Ctx<P = unknown, Q = unknown, B = undefined> = RequestContext<P, Q, B>;

export async function createWebhook(
  ctx: Ctx<unknown, unknown, s.Infer<typeof createWebhookBody>>,
): Promise<RouteResult> {
  const { endpoint, secret } = await ctx.clients.webhooks.createEndpoint({
    spaceId: spaceOf(ctx.principal),
    url: ctx.body.url,
    eventTypes: ctx.body.event_types,
    description: ctx.body.description ?? "",
  });
  return { data: endpoint ? { ...presentEndpoint(endpoint), secret } : null };
}

export async function listWebhooks(ctx: Ctx): Promise<RouteResult> {
  const { endpoints } = await ctx.clients.webhooks.listEndpoints({ spaceId: spaceOf(ctx.principal) });
  return { data: endpoints.map(presentEndpoint) };
}

export async function getWebhook(ctx: Ctx<s.Infer<typeof webhookPath>>): Promise<RouteResult> {
  const { endpoint } = await ctx.clients.webhooks.getEndpoint({
    spaceId: spaceOf(ctx.principal),
    endpointId: ctx.params.webhook_id,
  });
  return { data: endpoint ? presentEndpoint(endpoint) : null };
}

export async function deleteWebhook(ctx: Ctx<s.Infer<typeof webhookPath>>): Promise<RouteResult> {
  await ctx.clients.webhooks.deleteEndpoint({
    spaceId: spaceOf(ctx.principal),
    endpointId: ctx.params.webhook_id,
  });
  return { data: null };
}

export async function listDeliveries(
  ctx: Ctx<s.Infer<typeof webhookPath>, s.Infer<typeof deliveriesQuery>>,
): Promise<RouteResult> {
  const res = await ctx.clients.webhooks.listDeliveries({
    spaceId: spaceOf(ctx.principal),
    endpointId: ctx.params.webhook_id,
    page: pageRequest(ctx.query),
  });
  return { data: paginated(res.deliveries.map(presentDelivery), res.page, ctx.url, ctx.baseUrl) };
}
