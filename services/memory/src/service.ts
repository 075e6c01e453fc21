import { type MemoryService, MemoryType } from "@avatar/contracts/memory";
import { invalidRequest, isUuid, notFound, pageInfo, pageWindow } from "@avatar/runtime";
import type { ServiceImpl } from "@connectrpc/connect";
import type { MemoryContext } from "./context.js";
import { createMemoryFromSession } from "./create.js";
import { addSessionEpisode } from "./episodes.js";
import { memoryListItemToProto, memoryToProto, memoryTypeFromProto } from "./mapping.js";
import * as repo from "./repository.js";
import { resolveMemory } from "./resolve.js";
import type { MemoryRow } from "./schema.js";

/** MemoryService: every operation is scoped to the caller's space; another space's memory is a 404. */
export function memoryService(ctx: MemoryContext): ServiceImpl<typeof MemoryService> {
  const { db } = ctx;

  const detail = async (row: MemoryRow) => memoryToProto(row, await repo.listEpisodes(db, row.id));

  async function spaceMemory(spaceId: string, memoryId: string): Promise<MemoryRow> {
    const row = isUuid(memoryId) ? await repo.findMemory(db, spaceId, memoryId) : undefined;
    if (!row) throw notFound("Memory not found", { field: "memory_id" });
    return row;
  }

  return {
    async createMemory(req) {
      // Session is the only memory type; an unspecified type means it.
      if (req.memoryType !== MemoryType.SESSION && req.memoryType !== MemoryType.UNSPECIFIED) {
        throw invalidRequest("Unknown memory type", { field: "memory_type" });
      }
      const row = await createMemoryFromSession(ctx, req.spaceId, req.sessionId, "session_id");
      return { memory: await detail(row) };
    },

    async listMemories(req) {
      const window = pageWindow(req.page);
      const { rows, count } = await repo.listMemories(
        db,
        req.spaceId,
        memoryTypeFromProto(req.memoryType),
        window.offset,
        window.pageSize,
      );
      return { memories: rows.map(memoryListItemToProto), page: pageInfo(window, count) };
    },

    async getMemory(req) {
      return { memory: await detail(await spaceMemory(req.spaceId, req.memoryId)) };
    },

    async deleteMemory(req) {
      const deleted = isUuid(req.memoryId) && (await repo.deleteMemory(db, req.spaceId, req.memoryId));
      if (!deleted) throw notFound("Memory not found", { field: "memory_id" });
      return {};
    },

    async resolveMemory(req) {
      const { memory, created } = await resolveMemory(ctx, {
        spaceId: req.spaceId,
        prevSessionId: req.prevSessionId,
        sessionMemoryId: req.sessionMemoryId,
      });
      return { memory: await detail(memory), created };
    },

    async addSessionEpisode(req) {
      const outcome = await addSessionEpisode(ctx, req.memoryId, req.sessionId);
      if (outcome.kind === "no_transcript") {
        throw invalidRequest(`Session ${req.sessionId} has no transcript entries; no episode was added`, {
          field: "session_id",
        });
      }
      return { memory: await detail(outcome.memory), added: outcome.kind === "added" };
    },
  };
}
