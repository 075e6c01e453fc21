import { Tier } from "@avatar/contracts/tokens";
import { silentLogger } from "@avatar/runtime";
import { startSuite } from "@avatar/suite";
import { type BenchEnvironment, withFreshDatabase } from "./environment.js";

export interface BenchSpace {
  spaceId: string;
  apiKey: string;
  /** A public avatar that can run LITE and FULL sessions. */
  avatarId: string;
}

/**
 * The benchmark's space, key, credits and avatar, made through the services themselves (a suite in this
 * process, on the benchmark's database, stopped again before anything is measured).
 */
export async function prepareSpace(env: Record<string, string>): Promise<BenchSpace> {
  const suite = await startSuite({
    log: silentLogger,
    databaseUrl: env.DATABASE_URL,
    dataDir: env.DATA_DIR ?? ".data",
    gatewayPort: 0,
    gatewayHost: "127.0.0.1",
    env: { ...process.env, ...env },
  });
  try {
    const { space, apiKeySecret } = await suite.clients.tokens.createSpace({
      name: "Benchmark",
      tier: Tier.SCALE,
    });
    const spaceId = space?.id ?? "";
    await suite.clients.sessions.grantCredits({ spaceId, amount: "100000000", note: "benchmark" });
    const [avatar] = (await suite.clients.catalog.listPublicAvatars({ page: { page: 1, pageSize: 1 } }))
      .avatars;
    if (!avatar) throw new Error("the catalog has no public avatar");
    return { spaceId, apiKey: apiKeySecret, avatarId: avatar.id };
  } finally {
    await suite.stop();
  }
}

/**
 * What one backend runs on: a database of its own (withFreshDatabase) with its benchmark space. Every
 * backend a benchmark starts is prepared this way.
 */
export async function prepareOwnDatabase(
  environment: BenchEnvironment,
): Promise<{ own: BenchEnvironment; space: BenchSpace }> {
  const own = await withFreshDatabase(environment);
  return { own, space: await prepareSpace(own.env) };
}

/** The body of a LITE token mint, as the benchmarks send it; the floor stores one of the same size. */
export const mintBody = (avatarId: string): string => JSON.stringify({ mode: "LITE", avatar_id: avatarId });
