import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { type Bus, createMemoryBus } from "@avatar/bus";
import { catalogModule, readCatalogFile } from "@avatar/catalog";
import { type GrantCreditsRequest, SessionsService } from "@avatar/contracts/sessions";
import {
  type AnyServiceModule,
  type Clients,
  createClients,
  invalidRequest,
  listen,
  type RunningService,
  serviceHandler,
  silentLogger,
  startService,
} from "@avatar/runtime";
import { createTestDatabase, testIdentities, testIdentity } from "@avatar/testkit";
import { tokensModule } from "@avatar/tokens";
import { Code, ConnectError } from "@connectrpc/connect";
import { run } from "../src/cli.js";

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** A DATA_DIR with no running suite in it, so that no developer's `pnpm start` leaks into a test. */
const noSuiteHere = path.join(tmpdir(), "avatarctl-test-no-suite");

/** Runs avatarctl in this process with only the given environment (and `bus` as the deployment's bus). */
export async function cli(
  argv: string[],
  env: Record<string, string | undefined> = {},
  bus?: Bus,
): Promise<CliResult> {
  let stdout = "";
  let stderr = "";
  const code = await run(argv, {
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
    env: { DATA_DIR: noSuiteHere, ...env },
    ...(bus ? { bus } : {}),
  });
  return { code, stdout, stderr };
}

const SCALE = 1_000_000n;

function toMicros(amount: string): bigint {
  const [whole = "0", fraction = ""] = amount.split(".");
  return BigInt(whole) * SCALE + BigInt(fraction.padEnd(6, "0").slice(0, 6));
}

function fromMicros(micros: bigint): string {
  const fraction = (micros % SCALE).toString().padStart(6, "0").replace(/0+$/, "");
  return `${micros / SCALE}${fraction ? `.${fraction}` : ""}`;
}

/**
 * TEST DOUBLE of the SessionsService credit calls (GetCredits, GrantCredits): balances in a Map, a retried
 * idempotency key counts once. The real sessions service does not exist yet; it replaces this double.
 */
export class SessionsCreditsTestDouble {
  readonly balances = new Map<string, bigint>();
  readonly grants: GrantCreditsRequest[] = [];
  private readonly seenKeys = new Set<string>();
  /** When set, the next GrantCredits fails as an unreachable service would. */
  failNextGrant = false;

  readonly app = {
    name: "sessions-test-double",
    routes: (router: import("@connectrpc/connect").ConnectRouter) =>
      router.service(SessionsService, {
        getCredits: (req) => ({ creditsLeft: this.creditsLeft(req.spaceId) }),
        grantCredits: (req) => {
          if (this.failNextGrant) {
            this.failNextGrant = false;
            throw new ConnectError("sessions service unavailable (test double)", Code.Unavailable);
          }
          if (!/^\d+(\.\d+)?$/.test(req.amount) || toMicros(req.amount) <= 0n) {
            throw invalidRequest("amount must be a positive decimal", { field: "amount" });
          }
          const key = `${req.spaceId}/${req.idempotencyKey}`;
          if (!req.idempotencyKey || !this.seenKeys.has(key)) {
            this.seenKeys.add(key);
            this.grants.push(req);
            this.balances.set(req.spaceId, (this.balances.get(req.spaceId) ?? 0n) + toMicros(req.amount));
          }
          return { creditsLeft: this.creditsLeft(req.spaceId) };
        },
      }),
  };

  creditsLeft(spaceId: string): string {
    return fromMicros(this.balances.get(spaceId) ?? 0n);
  }
}

export interface TestServices {
  env: Record<string, string>;
  clients: Clients;
  sessions: SessionsCreditsTestDouble;
  /** A folder for import files, removed by stop(). */
  dir: string;
  stop(): Promise<void>;
}

/**
 * The real tokens and catalog services on a fresh database of the run's Postgres, each on its own
 * loopback port as in production, plus the sessions credits test double. The catalog starts from a
 * catalog file without voices or avatars, so imports are what put them there.
 */
export async function startTestServices(): Promise<TestServices> {
  const db = await createTestDatabase();
  const dir = await mkdtemp(path.join(tmpdir(), "avatarctl-"));
  const repoCatalog = readCatalogFile();
  const emptyCatalog = path.join(dir, "empty-catalog.json");
  await writeFile(
    emptyCatalog,
    JSON.stringify({ ...repoCatalog, voices: [], public_avatars: [], demo_space_avatars: [] }),
  );
  const bus = createMemoryBus();
  const [tokensListening, catalogListening, sessionsListening] = await Promise.all(
    [0, 1, 2].map(() => listen({ port: 0, host: "127.0.0.1" })),
  );
  if (!tokensListening || !catalogListening || !sessionsListening) throw new Error("listener missing");
  const urls = {
    tokens: tokensListening.url,
    catalog: catalogListening.url,
    sessions: sessionsListening.url,
  };
  const clients = createClients(urls, testIdentity("avatarctl"));
  const serviceEnv = {
    ENCRYPTION_KEYS: `test:${randomBytes(32).toString("base64")}`,
    DATA_DIR: dir,
    CATALOG_FILE: emptyCatalog,
  };
  const running: RunningService[] = [];
  const sessions = new SessionsCreditsTestDouble();
  sessionsListening.setHandler(serviceHandler(sessions.app, silentLogger, testIdentity("sessions")));
  const stop = async () => {
    await sessionsListening.close(1_000);
    for (const service of running.reverse()) await service.stop();
    await bus.close();
    await db.drop();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const modules: [AnyServiceModule, typeof tokensListening][] = [
      [tokensModule, tokensListening],
      [catalogModule, catalogListening],
    ];
    for (const [module, listening] of modules) {
      running.push(
        await startService(module, {
          databaseUrl: db.url,
          bus,
          log: silentLogger,
          clients: createClients(urls, testIdentity(module.name)),
          env: serviceEnv,
          listening,
          identity: testIdentity(module.name),
          poolSize: 3,
        }),
      );
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    env: {
      TOKENS_URL: urls.tokens,
      CATALOG_URL: urls.catalog,
      SESSIONS_URL: urls.sessions,
      SERVICE_IDENTITY_KEY: testIdentities.privateKeys.avatarctl,
    },
    clients,
    sessions,
    dir,
    stop,
  };
}
