import { chmod, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { startEmbeddedPostgres } from "@avatar/embedded-postgres";
import type { TestProject } from "vitest/node";

/**
 * One Postgres server for the whole test run: the real server CI started (TEST_DATABASE_URL), or an
 * embedded one in a temporary folder. Each test file then creates its own database on it.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const external = process.env.TEST_DATABASE_URL;
  if (external) {
    project.provide("pgAdminUrl", external);
    return async () => {};
  }
  const dir = await mkdtemp(path.join(tmpdir(), "avatar-test-pg-"));
  // As root, Postgres runs as the `postgres` user, which must be able to enter the folder.
  await chmod(dir, 0o755);
  const pg = await startEmbeddedPostgres({
    dataDir: path.join(dir, "data"),
    persistent: false,
    throwaway: true,
  });
  project.provide("pgAdminUrl", pg.url);
  return async () => {
    await pg.stop();
    await rm(dir, { recursive: true, force: true });
  };
}

declare module "vitest" {
  export interface ProvidedContext {
    pgAdminUrl: string;
  }
}
