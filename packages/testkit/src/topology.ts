import { randomUUID } from "node:crypto";
import {
  type CallerName,
  freePort,
  generateIdentitySet,
  type IdentitySet,
  identityEnv,
  identityOf,
  isCallerName,
  type ServiceIdentity,
} from "@avatar/runtime";
import { type SpawnedProcess, spawnEntry, waitForReady } from "./processes.js";

export interface ProcessSpec {
  name: string;
  /** The entry point, from the repository root: `services/tokens/src/main.ts`. */
  entry: string;
  /** The other processes find it at `<NAME>_URL` (a service they call over Connect). */
  service?: boolean;
  env?: Record<string, string>;
  /** The service identity it signs and verifies with; by default the one of its entry point. */
  identity?: CallerName;
  /** Its port (a free one when absent). */
  port?: number;
}

export interface Topology {
  /** `http://127.0.0.1:<port>` of a process. */
  url(name: string): string;
  /** `http://127.0.0.1:<port>/metrics`: each process serves its metrics on a port of its own (METRICS_PORT). */
  metricsUrl(name: string): string;
  process(name: string): SpawnedProcess;
  readonly processes: readonly SpawnedProcess[];
  /** Starts a process again (after it was killed or stopped) as it was started; resolves once it is ready. */
  restart(name: string, readyTimeoutMs?: number): Promise<SpawnedProcess>;
  /** Every service's `<NAME>_URL`. */
  readonly serviceUrls: Record<string, string>;
  /** Milliseconds from spawning each process to its first 200 on `/readyz`. */
  readonly readyMs: Record<string, number>;
  /** The identities the processes got; the test calls them as one of these (e.g. the operator). */
  readonly identities: IdentitySet;
  identity(name: CallerName): ServiceIdentity;
  /** SIGTERM to each process, last started first; their exit codes by name. */
  stop(): Promise<Record<string, number | null>>;
}

export interface TopologyOptions {
  readyTimeoutMs?: number;
  /** Starts each process once the one before it is ready, so that start-up times do not overlap. */
  oneAtATime?: boolean;
  /**
   * Options for every process's `node` (e.g. --cpu-prof, which NODE_OPTIONS does not take), or each
   * process's by its name.
   */
  nodeArgs?: string[] | ((name: string) => string[]);
}

/**
 * Starts the given entry points as separate processes on free loopback ports, as a deployment runs them:
 * each gets the shared environment, every service's `<NAME>_URL`, its own `PORT` and `METRICS_PORT`, its
 * service identity (a fresh set per topology) and extra env; resolves
 * once all answer `/readyz` (rejects with a process's output when it exits or is not ready in time).
 */
export async function spawnTopology(
  specs: ProcessSpec[],
  sharedEnv: Record<string, string>,
  options: TopologyOptions = {},
): Promise<Topology> {
  const readyTimeoutMs = options.readyTimeoutMs ?? 90_000;
  const ports = new Map<string, number>();
  const metricsPorts = new Map<string, number>();
  for (const spec of specs) {
    ports.set(spec.name, spec.port ?? (await freePort()));
    metricsPorts.set(spec.name, await freePort());
  }
  const url = (name: string) => {
    const port = ports.get(name);
    if (port === undefined) throw new Error(`no process named ${name}`);
    return `http://127.0.0.1:${port}`;
  };
  const serviceUrls = Object.fromEntries(
    specs.filter((s) => s.service).map((s) => [`${s.name.toUpperCase()}_URL`, url(s.name)]),
  );
  const processes: SpawnedProcess[] = [];
  const readyMs: Record<string, number> = {};
  const identities = generateIdentitySet();
  const identityEnvOf = (spec: ProcessSpec) => {
    const identity = spec.identity ?? identityOfEntry(spec.entry);
    return identity ? identityEnv(identities, identity) : {};
  };
  const spawn = (spec: ProcessSpec) =>
    spawnEntry(
      spec.name,
      spec.entry,
      {
        ...sharedEnv,
        ...serviceUrls,
        ...identityEnvOf(spec),
        PORT: String(ports.get(spec.name)),
        METRICS_PORT: String(metricsPorts.get(spec.name)),
        HOST: "127.0.0.1",
        ...spec.env,
      },
      typeof options.nodeArgs === "function" ? options.nodeArgs(spec.name) : options.nodeArgs,
    );
  const start = async (spec: ProcessSpec) => {
    const t0 = performance.now();
    const p = spawn(spec);
    processes.push(p);
    await waitForReady(`${url(p.name)}/readyz`, p, readyTimeoutMs, options.oneAtATime ? 5 : 100);
    readyMs[p.name] = performance.now() - t0;
  };
  const topology: Topology = {
    url,
    metricsUrl: (name) => `http://127.0.0.1:${metricsPorts.get(name)}/metrics`,
    process: (name) => {
      const found = processes.find((p) => p.name === name);
      if (!found) throw new Error(`no process named ${name}`);
      return found;
    },
    processes,
    restart: async (name, timeoutMs = readyTimeoutMs) => {
      const index = processes.findIndex((p) => p.name === name);
      const spec = specs.find((s) => s.name === name);
      if (index < 0 || !spec) throw new Error(`no process named ${name}`);
      await processes[index]?.stop();
      const started = spawn(spec);
      processes[index] = started;
      await waitForReady(`${url(name)}/readyz`, started, timeoutMs);
      return started;
    },
    serviceUrls,
    readyMs,
    identities,
    identity: (name) => identityOf(identities, name),
    stop: async () => {
      const codes: Record<string, number | null> = {};
      for (const p of [...processes].reverse()) codes[p.name] = await p.stop();
      return codes;
    },
  };
  try {
    if (options.oneAtATime) for (const spec of specs) await start(spec);
    else await Promise.all(specs.map(start));
  } catch (err) {
    await topology.stop();
    throw err;
  }
  return topology;
}

/** The specs of the suite's services (each reachable by the others at `<NAME>_URL`). */
export function serviceSpecs(...names: string[]): ProcessSpec[] {
  return names.map((name) => ({ name, entry: `services/${name}/src/main.ts`, service: true }));
}

/** `services/pipeline/src/main.ts` (or its bundle, `dist/main.js`) runs the pipeline, `gateway/...` the gateway. */
function identityOfEntry(entry: string): CallerName | undefined {
  const name = /^(?:services\/)?([a-z]+)\/(?:src\/main\.ts|dist\/main\.js)$/.exec(entry)?.[1] ?? "";
  return isCallerName(name) ? name : undefined;
}

/**
 * The settings every separate-process topology of the tests shares: its database, its NATS server with a
 * namespace of its own (tests share one server), a fixed test encryption key, and a rate-limit store
 * timeout that a first KV round trip on a loaded machine does not exceed (100 ms by default, after which
 * the limiter rightly fails open: the tests are about sharing counters, not about that timeout).
 */
export function topologyEnv(databaseUrl: string, natsUrl?: string): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl,
    ...(natsUrl ? { NATS_URL: natsUrl, NATS_NAMESPACE: `t${randomUUID().slice(0, 8)}` } : {}),
    ENCRYPTION_KEYS: `k1:${Buffer.alloc(32, 7).toString("base64")}`,
    RATE_LIMIT_STORE_TIMEOUT_MS: "1000",
  };
}
