import type { ServiceApp, ServiceDeps, ServiceModule } from "@avatar/runtime";
import { migrations } from "./migrations/index.js";

// biome-ignore lint/complexity/noBannedTypes: no tables yet
export type PipelineDatabase = {};

/** Session workers arrive with the realtime issue; until then the service serves no RPC. */
export async function build(_deps: ServiceDeps<PipelineDatabase>): Promise<ServiceApp> {
  return { name: "pipeline", routes: () => {} };
}

export const pipelineModule: ServiceModule<PipelineDatabase> = { name: "pipeline", migrations, build };
