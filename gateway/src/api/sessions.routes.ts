import type { Route } from "../http/route.js";

/** Session lifecycle, reads, transcripts, events and credits. */
export const sessionRoutes: Route[] = [];
