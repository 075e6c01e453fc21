import type { PipelineService } from "@avatar/contracts/pipeline";
import { notFound } from "@avatar/runtime";
import type { ServiceImpl } from "@connectrpc/connect";
import type { WorkerRegistry } from "./worker/registry.js";

/** The operators' view of the workers, from the heartbeats this replica has seen. */
export function pipelineService(registry: WorkerRegistry): ServiceImpl<typeof PipelineService> {
  return {
    async listWorkers() {
      return { workers: registry.list() };
    },
    async getSessionWorker(req) {
      const worker = registry.workerOf(req.sessionId);
      if (!worker) throw notFound("No worker runs this session", { field: "session_id" });
      return { worker };
    },
  };
}
