/** What the load generator is asked to run, and what it answers (JSON over argv and stdout). */
export interface Scenario {
  url: string;
  /** `single`: one request over and over; `lifecycle`: mint, start with the minted token, stop. */
  kind: "single" | "lifecycle";
  path: string;
  /**
   * The headers of each operation's first request, one set after the other (one set per API key, so
   * a run can spread its load over many keys and spaces); at least one set.
   */
  headers: Record<string, string>[];
  body: string;
  connections: number;
  seconds: number;
  warmupSeconds: number;
}

export interface LoadResult {
  /** Completed requests with a 2xx answer per second (for `lifecycle`, each of the three counts). */
  requestsPerSecond: number;
  /** Operations per second: requests for `single`, completed mint+start+stop sequences for `lifecycle`. */
  opsPerSecond: number;
  /** Per request, in milliseconds. */
  p50: number;
  p99: number;
  /** Answers other than 2xx, by status, and connection errors/timeouts. */
  statuses: Record<string, number>;
  errors: number;
}
