import { randomUUID } from "node:crypto";
import { AvatarStatus } from "@avatar/contracts/catalog";
import { Tier } from "@avatar/contracts/tokens";
import { silentLogger } from "@avatar/runtime";
import { startSuite } from "@avatar/suite";
import { type BenchEnvironment, withFreshDatabase } from "./environment.js";

export interface BenchSpace {
  /** Every API key the load spreads over (at least one), in KeySpread.spaces spaces. */
  apiKeys: string[];
  /** An avatar that can run LITE and FULL sessions: the space's own, or a public one (KeySpread.avatar). */
  avatarId: string;
  /** A context every space of the benchmark reads (public, of the first space): what a FULL mint runs with. */
  contextId: string;
}

/** What a benchmark's token mints ask for: a LITE session, or a FULL one with the space's context. */
export const MINT_MODES = ["LITE", "FULL"] as const;
export type MintMode = (typeof MINT_MODES)[number];

/**
 * How many API keys a benchmark's load uses, over how many spaces they are spread (one key each first),
 * and whose avatar it mints with: the space's own (as a customer's avatars and `pnpm start`'s demo
 * space's are; one space only, since no other space sees it) or one of the public catalog's.
 */
export interface KeySpread {
  apiKeys: number;
  spaces: number;
  avatar: "own" | "public";
}

const ONE_KEY: KeySpread = { apiKeys: 1, spaces: 1, avatar: "own" };

/**
 * The benchmark's spaces, keys, credits and avatar, made through the services themselves (a suite in this
 * process, on the benchmark's database, stopped again before anything is measured). Key i belongs to
 * space i % spaces, so each space has at least one.
 */
export async function prepareSpace(env: Record<string, string>, spread = ONE_KEY): Promise<BenchSpace> {
  checkKeySpread(spread);
  const suite = await startSuite({
    log: silentLogger,
    databaseUrl: env.DATABASE_URL,
    dataDir: env.DATA_DIR ?? ".data",
    gatewayPort: 0,
    gatewayHost: "127.0.0.1",
    env: { ...process.env, ...env },
  });
  try {
    const spaceIds: string[] = [];
    const apiKeys: string[] = [];
    for (let i = 0; i < spread.spaces; i++) {
      const { space, apiKeySecret } = await suite.clients.tokens.createSpace({
        name: `Benchmark ${i + 1}`,
        tier: Tier.SCALE,
      });
      const spaceId = space?.id ?? "";
      await suite.clients.sessions.grantCredits({ spaceId, amount: "100000000", note: "benchmark" });
      spaceIds.push(spaceId);
      apiKeys.push(apiKeySecret);
    }
    for (let i = spread.spaces; i < spread.apiKeys; i++) {
      const { apiKeySecret } = await suite.clients.tokens.createApiKey({
        spaceId: spaceIds[i % spread.spaces] ?? "",
        name: `Benchmark key ${i + 1}`,
      });
      apiKeys.push(apiKeySecret);
    }
    const [avatar] = (await suite.clients.catalog.listPublicAvatars({ page: { page: 1, pageSize: 1 } }))
      .avatars;
    if (!avatar) throw new Error("the catalog has no public avatar");
    let avatarId = avatar.id;
    if (spread.avatar === "own") {
      avatarId = randomUUID();
      await suite.clients.catalog.importAvatars({
        avatars: [
          {
            id: avatarId,
            spaceId: spaceIds[0] ?? "",
            name: "Benchmark",
            type: avatar.type,
            status: AvatarStatus.ACTIVE,
            defaultVoice: { id: avatar.defaultVoice?.id ?? "" },
          },
        ],
      });
    }
    // As a customer makes one: through the gateway (the operator's identity may not).
    const res = await fetch(`${suite.gatewayUrl}/v1/contexts`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": apiKeys[0] ?? "" },
      body: JSON.stringify({
        name: "Benchmark",
        prompt: "You are the benchmark's avatar. Answer in one sentence.",
        opening_text: "Hello!",
        is_public: true,
      }),
    });
    const created = (await res.json()) as { data?: { id?: string } };
    if (!res.ok || !created.data?.id)
      throw new Error(`creating the context: ${res.status} ${JSON.stringify(created)}`);
    return { apiKeys, avatarId, contextId: created.data.id };
  } finally {
    await suite.stop();
  }
}

/** Refuses a spread no benchmark can run: fewer keys than spaces, no space, an own avatar over many spaces. */
export function checkKeySpread(spread: KeySpread): void {
  if (!(Number.isInteger(spread.spaces) && spread.spaces >= 1 && Number.isInteger(spread.apiKeys))) {
    throw new Error(
      `keys (${spread.apiKeys}) and spaces (${spread.spaces}) must be whole numbers, at least 1`,
    );
  }
  if (spread.apiKeys < spread.spaces) {
    throw new Error(
      `keys (${spread.apiKeys}) must be at least the spaces (${spread.spaces}): each space has one`,
    );
  }
  if (spread.avatar === "own" && spread.spaces > 1) {
    throw new Error(
      "a space's own avatar is seen by that space alone: mint with a public one over many spaces",
    );
  }
}

/**
 * What one backend runs on: a database of its own (withFreshDatabase) with its benchmark space. Every
 * backend a benchmark starts is prepared this way.
 */
export async function prepareOwnDatabase(
  environment: BenchEnvironment,
  spread = ONE_KEY,
): Promise<{ own: BenchEnvironment; space: BenchSpace }> {
  const own = await withFreshDatabase(environment);
  return { own, space: await prepareSpace(own.env, spread) };
}

/** The header sets of a load over the space's keys, one per key. */
export const apiKeyHeaders = (space: BenchSpace): Record<string, string>[] =>
  space.apiKeys.map((key) => ({ "x-api-key": key }));

/**
 * The body of a token mint as the benchmarks send it: LITE, or FULL with the space's context (the avatar's
 * default voice); the floor stores one of the same size.
 */
export const mintBody = (
  space: Pick<BenchSpace, "avatarId" | "contextId">,
  mode: MintMode = "LITE",
): string =>
  JSON.stringify(
    mode === "LITE"
      ? { mode, avatar_id: space.avatarId }
      : { mode, avatar_id: space.avatarId, avatar_persona: { context_id: space.contextId } },
  );

/** A body of the same size for the floor to store. */
export const floorMintBody = (mode: MintMode = "LITE"): string =>
  mintBody({ avatarId: randomUUID(), contextId: randomUUID() }, mode);
