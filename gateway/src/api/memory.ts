import { MemoryType } from "@avatar/contracts/memory";
import type { RequestContext, RouteResult } from "../http/route.js";
import { presentMemory, presentMemoryListItem } from "../present/memory.js";
import { paginated } from "../present/paginated.js";
import * as s from "../schema/index.js";
import { pageQuery, pageRequest } from "./paging.js";
import { spaceOf } from "./principal.js";

const memoryType = () => s.enumOf(["session"], { name: "MemoryTypeEnum" });

export const memoryPath = s.path({ memory_id: s.uuid() });
export const memoryListQuery = s.query({ type: memoryType().optional(), ...pageQuery });
export const createMemoryBody = s.object("CreateMemoryRequest", {
  memory_type: memoryType(),
  session_id: s.uuid(),
});

type Ctx<P = unknown, Q = unknown, B = undefined> = RequestContext<P, Q, B>;

const toProtoType = (type: "session" | undefined) =>
  type === "session" ? MemoryType.SESSION : MemoryType.UNSPECIFIED;

export async function createMemory(
  ctx: Ctx<unknown, unknown, s.Infer<typeof createMemoryBody>>,
): Promise<RouteResult> {
  const { memory } = await ctx.clients.memory.createMemory({
    spaceId: spaceOf(ctx.principal),
    memoryType: toProtoType(ctx.body.memory_type),
    sessionId: ctx.body.session_id,
  });
  return { data: memory ? presentMemory(memory) : null };
}

export async function listMemories(ctx: Ctx<unknown, s.Infer<typeof memoryListQuery>>): Promise<RouteResult> {
  const res = await ctx.clients.memory.listMemories({
    spaceId: spaceOf(ctx.principal),
    memoryType: toProtoType(ctx.query.type),
    page: pageRequest(ctx.query),
  });
  return { data: paginated(res.memories.map(presentMemoryListItem), res.page, ctx.url, ctx.baseUrl) };
}

export async function getMemory(ctx: Ctx<s.Infer<typeof memoryPath>>): Promise<RouteResult> {
  const { memory } = await ctx.clients.memory.getMemory({
    spaceId: spaceOf(ctx.principal),
    memoryId: ctx.params.memory_id,
  });
  return { data: memory ? presentMemory(memory) : null };
}

/** 204 with no body (contract section 1). */
export async function deleteMemory(ctx: Ctx<s.Infer<typeof memoryPath>>): Promise<RouteResult> {
  await ctx.clients.memory.deleteMemory({ spaceId: spaceOf(ctx.principal), memoryId: ctx.params.memory_id });
  return { status: 204, raw: null };
}
