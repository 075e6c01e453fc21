import { egressUrlProblem } from "@avatar/runtime";
import type { RequestContext, RouteResult } from "../http/route.js";
import { presentLlmConfiguration } from "../present/agents.js";
import * as s from "../schema/index.js";
import { spaceOf } from "./principal.js";

/** LLM configurations: a model behind any OpenAI-compatible endpoint, on a key the space stored. */

const displayName = () => s.string({ minLength: 1, maxLength: 255 });
const modelName = () => s.string({ minLength: 1, maxLength: 255 });
/** An OpenAI-compatible endpoint our servers call: http(s), no user info, no fragment (the egress rules). */
const baseUrl = () =>
  s.httpUrl().refine(
    (url) => egressUrlProblem(url) === undefined,
    (url) => `URL ${egressUrlProblem(url)}`,
  );

export const createLlmConfigurationBody = s.object("CreateLlmConfigurationRequest", {
  display_name: displayName(),
  model_name: modelName(),
  secret_id: s.uuid().describe("A secret of the space: the key sent to the endpoint."),
  base_url: baseUrl().describe(
    "An OpenAI-compatible chat-completions endpoint (its API root). Our servers reach only public addresses " +
      "there, or hosts the operator allowed; no user name, password or fragment.",
  ),
});

export const updateLlmConfigurationBody = s.object("UpdateLlmConfigurationRequest", {
  display_name: displayName().nullable().optional(),
  model_name: modelName().nullable().optional(),
  secret_id: s.uuid().nullable().optional(),
  base_url: baseUrl().nullable().optional(),
});

export const llmConfigurationPath = s.path({ llm_configuration_id: s.uuid() });

type Ctx<P = unknown, B = undefined> = RequestContext<P, unknown, B>;
type PathCtx<B = undefined> = Ctx<s.Infer<typeof llmConfigurationPath>, B>;

export async function createLlmConfiguration(
  ctx: Ctx<unknown, s.Infer<typeof createLlmConfigurationBody>>,
): Promise<RouteResult> {
  const { llmConfiguration } = await ctx.clients.agents.createLlmConfiguration({
    spaceId: spaceOf(ctx.principal),
    displayName: ctx.body.display_name,
    modelName: ctx.body.model_name,
    secretId: ctx.body.secret_id,
    baseUrl: ctx.body.base_url,
  });
  return { data: llmConfiguration ? presentLlmConfiguration(llmConfiguration) : null };
}

export async function listLlmConfigurations(ctx: Ctx): Promise<RouteResult> {
  const res = await ctx.clients.agents.listLlmConfigurations({ spaceId: spaceOf(ctx.principal) });
  return { data: res.llmConfigurations.map(presentLlmConfiguration) };
}

export async function getLlmConfiguration(ctx: PathCtx): Promise<RouteResult> {
  const { llmConfiguration } = await ctx.clients.agents.getLlmConfiguration({
    spaceId: spaceOf(ctx.principal),
    llmConfigurationId: ctx.params.llm_configuration_id,
  });
  return { data: llmConfiguration ? presentLlmConfiguration(llmConfiguration) : null };
}

export async function updateLlmConfiguration(
  ctx: PathCtx<s.Infer<typeof updateLlmConfigurationBody>>,
): Promise<RouteResult> {
  const b = ctx.body;
  const { llmConfiguration } = await ctx.clients.agents.updateLlmConfiguration({
    spaceId: spaceOf(ctx.principal),
    llmConfigurationId: ctx.params.llm_configuration_id,
    displayName: b.display_name ?? undefined,
    modelName: b.model_name ?? undefined,
    secretId: b.secret_id ?? undefined,
    baseUrl: b.base_url ?? undefined,
  });
  return { data: llmConfiguration ? presentLlmConfiguration(llmConfiguration) : null };
}

export async function deleteLlmConfiguration(ctx: PathCtx): Promise<RouteResult> {
  await ctx.clients.agents.deleteLlmConfiguration({
    spaceId: spaceOf(ctx.principal),
    llmConfigurationId: ctx.params.llm_configuration_id,
  });
  return { data: null };
}
