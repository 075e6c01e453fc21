import type { ServiceApp, ServiceDeps, ServiceModule } from "@avatar/runtime";
import { migrations } from "./migrations/index.js";

// biome-ignore lint/complexity/noBannedTypes: no tables yet
export type SessionsDatabase = {};

export async function build(_deps: ServiceDeps<SessionsDatabase>): Promise<ServiceApp> {
  return { name: "sessions", routes: () => {} };
}

export const sessionsModule: ServiceModule<SessionsDatabase> = { name: "sessions", migrations, build };
