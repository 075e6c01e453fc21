import type { Context } from "@avatar/contracts/agents";
import { invalidRequest } from "@avatar/runtime";
import type { AgentsLookup } from "./agents-cache.js";
import { fillPlaceholders, missingVariables, type Variables } from "./dynamic-variables.js";
import { lookup } from "./lookup.js";

export interface ResolvedContext {
  contextId: string;
  prompt: string;
  openingText: string;
}

/**
 * A context readable by the space (404 naming `field` otherwise) with its placeholders filled. Every
 * required dynamic variable of the context must have a value (400 listing the missing ones).
 */
export async function resolveContext(
  agents: Pick<AgentsLookup, "getContext">,
  spaceId: string,
  contextId: string,
  field: string,
  vars: Variables,
): Promise<ResolvedContext> {
  const context: Context = await lookup(contextId, { field, message: "Context not found" }, async () => {
    return (await agents.getContext({ spaceId, contextId })).context;
  });
  const missing = missingVariables(context.requiredDynamicVariables, vars);
  if (missing.length > 0) {
    throw invalidRequest(`Missing required dynamic variables: ${missing.join(", ")}`, {
      field: "dynamic_variables",
    });
  }
  return {
    contextId: context.id,
    prompt: fillPlaceholders(context.prompt, vars),
    openingText: fillPlaceholders(context.openingText, vars),
  };
}
