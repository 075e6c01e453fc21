/** What the load runs against: the public gateway of the suite or of separate processes. */
export interface Backend {
  gatewayUrl: string;
  /** The backend's processes, grouped by what they are; each group's pids (read again every call). */
  processes(): { name: string; pids: number[] }[];
  /** Where each Node process of the backend serves its metrics (Prometheus text), by name. */
  metricsUrls: Record<string, string>;
  /** Milliseconds from spawning each process to its readiness. */
  readyMs: Record<string, number>;
  /** What a process that exited while it should have been running wrote last. */
  exited(): string[];
  stop(): Promise<void>;
}
