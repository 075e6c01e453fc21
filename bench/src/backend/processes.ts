import { serviceSpecs, spawnTopology } from "@avatar/testkit";
import { commOf, descendants } from "../proc.js";
import type { Backend } from "./backend.js";
import type { BenchEnvironment } from "./environment.js";

export const SERVICES = ["tokens", "catalog", "agents", "memory", "sessions", "pipeline"] as const;

/**
 * Every service, the pipeline worker and the gateway as their own processes on the bench's Postgres and
 * nats-server, as they are deployed; started one at a time so that each start-up is timed alone.
 */
export async function startProcessBackend(environment: BenchEnvironment): Promise<Backend> {
  const specs = [...serviceSpecs(...SERVICES), { name: "gateway", entry: "gateway/src/main.ts" }];
  const topology = await spawnTopology(
    specs.map((s) => ({ ...s, entry: environment.entry(s.entry) })),
    { ...environment.env, NATS_URL: environment.nats.url },
    { readyTimeoutMs: 120_000, oneAtATime: true, nodeArgs: environment.nodeArgs },
  );
  return {
    gatewayUrl: topology.url("gateway"),
    readyMs: topology.readyMs,
    metricsUrls: Object.fromEntries(specs.map((s) => [s.name, topology.metricsUrl(s.name)])),
    processes: () => [
      ...topology.processes.map((p) => ({ name: p.name, pids: p.child.pid ? [p.child.pid] : [] })),
      { name: "postgres", pids: environment.pg.pids() },
      { name: "nats-server", pids: descendants(process.pid).filter((pid) => commOf(pid) === "nats-server") },
    ],
    exited: () =>
      topology.processes
        .filter((p) => p.child.exitCode !== null || p.child.signalCode !== null)
        .map(
          (p) => `${p.name} exited (${p.child.exitCode ?? p.child.signalCode}):\n${p.output().slice(-3000)}`,
        ),
    stop: async () => {
      await topology.stop();
    },
  };
}
