import { type Route, route } from "../http/route.js";
import { LIMIT_DEFAULT } from "../limits.js";
import * as webhooks from "./webhooks.js";

const common = { auth: "api_key", rateLimit: LIMIT_DEFAULT } as const;

/** Webhook endpoints and their delivery log (API key; another space's endpoint: 404). */
export const webhookRoutes: Route[] = [
  route({
    ...common,
    method: "POST",
    path: "/v1/webhooks",
    summary: "Register a webhook endpoint; the answer's `secret` (shown once) signs every delivery",
    body: webhooks.createWebhookBody,
    handle: webhooks.createWebhook,
  }),
  route({
    ...common,
    method: "GET",
    path: "/v1/webhooks",
    summary: "List the space's webhook endpoints",
    handle: webhooks.listWebhooks,
  }),
  route({
    ...common,
    method: "GET",
    path: "/v1/webhooks/{webhook_id}",
    summary: "Get a webhook endpoint (status, disabled_reason)",
    params: webhooks.webhookPath,
    handle: webhooks.getWebhook,
  }),
  route({
    ...common,
    method: "DELETE",
    path: "/v1/webhooks/{webhook_id}",
    summary: "Delete a webhook endpoint and its delivery log",
    params: webhooks.webhookPath,
    handle: webhooks.deleteWebhook,
  }),
  route({
    ...common,
    method: "GET",
    path: "/v1/webhooks/{webhook_id}/deliveries",
    summary: "The endpoint's deliveries, newest first, each with its attempts",
    params: webhooks.webhookPath,
    query: webhooks.deliveriesQuery,
    handle: webhooks.listDeliveries,
  }),
];
