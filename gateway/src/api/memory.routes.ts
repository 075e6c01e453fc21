import type { Route } from "../http/route.js";

/** Session memories. */
export const memoryRoutes: Route[] = [];
