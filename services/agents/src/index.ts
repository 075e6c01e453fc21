import type { ServiceApp, ServiceDeps, ServiceModule } from "@avatar/runtime";
import { migrations } from "./migrations/index.js";

// biome-ignore lint/complexity/noBannedTypes: no tables yet
export type AgentsDatabase = {};

export async function build(_deps: ServiceDeps<AgentsDatabase>): Promise<ServiceApp> {
  return { name: "agents", routes: () => {} };
}

export const agentsModule: ServiceModule<AgentsDatabase> = { name: "agents", migrations, build };
