import { freePort } from "@avatar/runtime";
import { spawnEntry, waitForReady } from "@avatar/testkit";
import type { Backend } from "./backend.js";
import type { BenchEnvironment } from "./environment.js";

/**
 * The one-process suite (what `pnpm start` runs) as a child process: in-process bus, the bench's Postgres.
 * `entry` another build of it (`pnpm bench:ab`), with `env` added to its environment.
 */
export async function startSuiteBackend(
  environment: BenchEnvironment,
  options: { entry?: string; env?: Record<string, string> } = {},
): Promise<Backend> {
  const port = await freePort();
  const metricsPort = await freePort();
  const t0 = performance.now();
  const { NATS_NAMESPACE: _, ...env } = environment.env;
  const suite = spawnEntry(
    "suite",
    options.entry ?? environment.entry("suite/src/main.ts"),
    { ...env, ...options.env, PORT: String(port), HOST: "127.0.0.1", METRICS_PORT: String(metricsPort) },
    environment.nodeArgs("suite"),
  );
  const gatewayUrl = `http://127.0.0.1:${port}`;
  try {
    await waitForReady(`${gatewayUrl}/readyz`, suite, 120_000, 5);
  } catch (err) {
    await suite.stop();
    throw err;
  }
  const readyMs = { suite: performance.now() - t0 };
  return {
    gatewayUrl,
    readyMs,
    metricsUrls: { suite: `http://127.0.0.1:${metricsPort}/metrics` },
    processes: () => [
      { name: "suite", pids: suite.child.pid ? [suite.child.pid] : [] },
      { name: "postgres", pids: environment.pg.pids() },
    ],
    exited: () =>
      suite.child.exitCode !== null || suite.child.signalCode !== null
        ? [
            `suite exited (${suite.child.exitCode ?? suite.child.signalCode}):\n${suite.output().slice(-3000)}`,
          ]
        : [],
    stop: async () => {
      await suite.stop();
    },
  };
}
