import { agentsRoutes } from "./api/agents.routes.js";
import { catalogRoutes } from "./api/catalog.routes.js";
import { embedPageRoutes } from "./api/embed-page.routes.js";
import { memoryRoutes } from "./api/memory.routes.js";
import { sessionTokenRoutes } from "./api/session-token.routes.js";
import { sessionRoutes } from "./api/sessions.routes.js";
import { webhookRoutes } from "./api/webhooks.routes.js";
import { whepRoutes } from "./api/whep.routes.js";
import { type Route, route } from "./http/route.js";
import { LIMIT_DEFAULT } from "./limits.js";
import { openApiDocument } from "./openapi.js";

/** Every public operation: method, path, credential, limit, request schemas and handler. */
export const routes: Route[] = [
  ...systemRoutes(),
  ...catalogRoutes,
  ...sessionTokenRoutes,
  ...sessionRoutes,
  ...whepRoutes,
  ...agentsRoutes,
  ...memoryRoutes,
  ...embedPageRoutes,
  ...webhookRoutes,
];

/** Health and this API's own description. */
function systemRoutes(): Route[] {
  return [
    route({
      method: "GET",
      path: "/healthz",
      summary: "Liveness of the gateway",
      auth: "none",
      rateLimit: LIMIT_DEFAULT,
      handle: async () => ({ data: { status: "ok" } }),
    }),
    route({
      method: "GET",
      path: "/openapi.json",
      summary: "This document",
      auth: "none",
      rateLimit: LIMIT_DEFAULT,
      handle: async (ctx) => ({
        raw: { contentType: "application/json", body: JSON.stringify(openApiDocument(routes, ctx.baseUrl)) },
      }),
    }),
  ];
}
