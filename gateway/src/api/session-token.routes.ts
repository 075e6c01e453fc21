import type { Route } from "../http/route.js";

/** POST /v1/sessions/token. */
export const sessionTokenRoutes: Route[] = [];
