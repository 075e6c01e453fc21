import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { readGatewayConfig } from "@avatar/gateway";
import { type Logger, silentLogger } from "@avatar/runtime";
import { allowedCallerClients, createTestDatabase, type TestDatabase } from "@avatar/testkit";
import { seedDemoSpace } from "../src/demo.js";
import { type Suite, type SuiteOptions, startSuite } from "../src/start-suite.js";

/**
 * The suite of a test. Its `clients` are fixtures: each call is signed as a caller the RPC allows (the
 * operator, the gateway, the pipeline...), so a test can set up and inspect anything; who may call
 * what is tested on its own (service-identity.test.ts).
 */
export interface TestSuite extends Suite {
  /** The demo space's API key. */
  apiKey: string;
  spaceId: string;
  dataDir: string;
  get(path: string, headers?: Record<string, string>): Promise<Response>;
  request(
    method: string,
    path: string,
    init?: { headers?: Record<string, string>; body?: unknown },
  ): Promise<Response>;
}

/**
 * The whole suite in this process on a fresh database of the run's Postgres server, with the demo space
 * seeded. On real NATS when TEST_NATS_URL is set (CI's second run), on the in-process bus otherwise.
 */
export async function startTestSuite(options: TestSuiteOptions = {}): Promise<TestSuite> {
  return startTestSuiteOn(await createTestDatabase(), options);
}

export interface TestSuiteOptions {
  log?: Logger;
  env?: Record<string, string>;
  overrides?: Partial<SuiteOptions>;
}

/** startTestSuite on a database made before (`stop` drops it): a process a test starts gets the test's. */
export async function startTestSuiteOn(db: TestDatabase, options: TestSuiteOptions = {}): Promise<TestSuite> {
  const dataDir = await mkdtemp(path.join(tmpdir(), "avatar-suite-"));
  // Tests of counting must not depend on the store answering within the production timeout on a loaded
  // machine; the fail-open tests set their own stores or timeouts.
  const env = { DATA_DIR: dataDir, RATE_LIMIT_STORE_TIMEOUT_MS: "2000", ...options.env };
  const suite = await startSuite({
    log: options.log ?? silentLogger,
    databaseUrl: db.url,
    // Test files run in parallel on one NATS server: each suite gets its own namespace.
    ...(process.env.TEST_NATS_URL
      ? { natsUrl: process.env.TEST_NATS_URL, natsNamespace: `t${crypto.randomUUID().slice(0, 8)}` }
      : {}),
    dataDir,
    gatewayPort: 0,
    gatewayHost: "127.0.0.1",
    env,
    gatewayConfig: readGatewayConfig(env),
    ...options.overrides,
  });
  const apiKey = `lak_test_${crypto.randomUUID().replaceAll("-", "")}`;
  const demo = await seedDemoSpace(suite.clients, apiKey);
  const request = (
    method: string,
    p: string,
    init: { headers?: Record<string, string>; body?: unknown } = {},
  ) =>
    fetch(`${suite.gatewayUrl}${p}`, {
      method,
      headers: {
        ...(init.body !== undefined ? { "content-type": "application/json" } : {}),
        ...init.headers,
      },
      ...(init.body !== undefined
        ? { body: typeof init.body === "string" ? init.body : JSON.stringify(init.body) }
        : {}),
    });
  return {
    ...suite,
    clients: allowedCallerClients(suite.serviceUrls, suite.identities),
    apiKey,
    spaceId: demo.spaceId,
    dataDir,
    request,
    get: (p, headers) => request("GET", p, headers ? { headers } : {}),
    stop: async () => {
      await suite.stop();
      await db.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** Grants `amount` credits to a space (the demo space by default). */
export async function grant(suite: TestSuite, amount: string, spaceId = suite.spaceId): Promise<void> {
  await suite.clients.sessions.grantCredits({ spaceId, amount, note: "test" });
}

/** Waits until the start of the next wall-clock second, so a burst falls in one rate-limit window. */
export async function atNextSecond(): Promise<void> {
  await new Promise((r) => setTimeout(r, 1000 - (Date.now() % 1000) + 15));
}

/** The decoded JSON body of a response, typed loosely for assertions. */
// biome-ignore lint/suspicious/noExplicitAny: test assertions read arbitrary JSON
export const json = async (res: Response): Promise<any> => res.json();
