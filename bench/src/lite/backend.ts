import type { Clients } from "@avatar/runtime";

/** What the load runs against: the public gateway, plus direct clients for the set-up. */
export interface Backend {
  gatewayUrl: string;
  clients: Pick<Clients, "tokens" | "sessions" | "catalog">;
  /** The backend's processes, grouped by what they are; each group's pids (read again every call). */
  processes(): { name: string; pids: number[] }[];
  stop(): Promise<void>;
}

/** Settings every backend process gets for the benchmark. */
export const backendEnv = {
  // Each simulated client has its own address (X-Forwarded-For), as real clients would.
  TRUST_PROXY: "true",
  PIPELINE_CAPACITY: "100000",
  LOG_LEVEL: "warn",
};
