import type { Route } from "../http/route.js";

/** Contexts, voice agents, secrets, LLM configurations and embeds. */
export const agentsRoutes: Route[] = [];
