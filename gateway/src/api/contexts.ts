import type { RequestContext, RouteResult } from "../http/route.js";
import { presentContext } from "../present/agents.js";
import { paginated } from "../present/paginated.js";
import * as s from "../schema/index.js";
import { pageQuery, pageRequest } from "./paging.js";
import { spaceOf } from "./principal.js";

/** Contexts: a prompt and an opening text with `${name}` placeholders, plus links. */

export const CONTEXT_NAME_MAX = 255;
const contextName = () => s.string({ minLength: 1, maxLength: CONTEXT_NAME_MAX });
const prompt = () => s.string({ minLength: 1, maxLength: 100_000 });
const openingText = () => s.string({ maxLength: 10_000 });

export const ContextLink = s.object("ContextLink", {
  url: s.httpUrl(),
  faq: s.string({ maxLength: 10_000 }).default(""),
});
const links = () => s.array(ContextLink, { maxItems: 100 });

export const contextPath = s.path({ context_id: s.uuid() });
export const contextListQuery = s.query({ ...pageQuery });

export const createContextBody = s.object("CreateContextRequest", {
  name: contextName(),
  prompt: prompt(),
  opening_text: openingText().default(""),
  links: links().default([]),
});

export const updateContextBody = s.object("UpdateContextRequest", {
  name: contextName().nullable().optional(),
  prompt: prompt().nullable().optional(),
  opening_text: openingText().nullable().optional(),
  links: links().nullable().optional(),
});

export const copyContextBody = s.object("CopyContextRequest", {
  name: contextName().nullable().optional().describe('Default: the original name followed by " (Copy)".'),
});

type Ctx<P = unknown, Q = unknown, B = undefined> = RequestContext<P, Q, B>;
type PathCtx<B = undefined> = Ctx<s.Infer<typeof contextPath>, unknown, B>;

export async function createContext(
  ctx: Ctx<unknown, unknown, s.Infer<typeof createContextBody>>,
): Promise<RouteResult> {
  const { context } = await ctx.clients.agents.createContext({
    spaceId: spaceOf(ctx.principal),
    name: ctx.body.name,
    prompt: ctx.body.prompt,
    openingText: ctx.body.opening_text,
    links: ctx.body.links,
  });
  return { data: context ? presentContext(context, true) : null };
}

export async function listContexts(
  ctx: Ctx<unknown, s.Infer<typeof contextListQuery>>,
): Promise<RouteResult> {
  const res = await ctx.clients.agents.listContexts({
    spaceId: spaceOf(ctx.principal),
    page: pageRequest(ctx.query),
  });
  const results = res.contexts.map((c) => presentContext(c, false));
  return { data: paginated(results, res.page, ctx.url, ctx.baseUrl) };
}

export async function getContext(ctx: PathCtx): Promise<RouteResult> {
  const { context } = await ctx.clients.agents.getContext({
    spaceId: spaceOf(ctx.principal),
    contextId: ctx.params.context_id,
  });
  return { data: context ? presentContext(context, true) : null };
}

export async function updateContext(ctx: PathCtx<s.Infer<typeof updateContextBody>>): Promise<RouteResult> {
  const b = ctx.body;
  const { context } = await ctx.clients.agents.updateContext({
    spaceId: spaceOf(ctx.principal),
    contextId: ctx.params.context_id,
    name: b.name ?? undefined,
    prompt: b.prompt ?? undefined,
    openingText: b.opening_text ?? undefined,
    links: b.links ?? [],
    setLinks: b.links !== undefined && b.links !== null,
  });
  return { data: context ? presentContext(context, true) : null };
}

export async function deleteContext(ctx: PathCtx): Promise<RouteResult> {
  await ctx.clients.agents.deleteContext({
    spaceId: spaceOf(ctx.principal),
    contextId: ctx.params.context_id,
  });
  return { data: null };
}

export async function copyContext(ctx: PathCtx<s.Infer<typeof copyContextBody>>): Promise<RouteResult> {
  const { context } = await ctx.clients.agents.copyContext({
    spaceId: spaceOf(ctx.principal),
    contextId: ctx.params.context_id,
    name: ctx.body.name ?? undefined,
  });
  return { data: context ? presentContext(context, true) : null };
}
