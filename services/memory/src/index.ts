import type { ServiceApp, ServiceDeps, ServiceModule } from "@avatar/runtime";
import { migrations } from "./migrations/index.js";

// biome-ignore lint/complexity/noBannedTypes: no tables yet
export type MemoryDatabase = {};

export async function build(_deps: ServiceDeps<MemoryDatabase>): Promise<ServiceApp> {
  return { name: "memory", routes: () => {} };
}

export const memoryModule: ServiceModule<MemoryDatabase> = { name: "memory", migrations, build };
