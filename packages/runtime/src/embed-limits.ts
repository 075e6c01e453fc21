/**
 * An embed's visitor limits and allowed origins: the defaults an embed gets when its owner sets
 * nothing, their bounds, and what an origin entry may be. The gateway (422 and its CORS/CSP), the agents
 * service (400, storage) and the sessions service (admission) read them here.
 */

export const EMBED_DEFAULTS = {
  /** Visitors' sessions at once (started, or minted and not yet started for a minute). */
  maxConcurrentSessions: 3,
  /** Visitors' sessions minted per rolling hour. */
  maxSessionsPerHour: 30,
  /** No origin but the gateway's own may frame the page or call its session endpoint from a browser. */
  allowedOrigins: [] as string[],
} as const;

export const EMBED_BOUNDS = {
  maxConcurrentSessions: { min: 1, max: 1_000 },
  maxSessionsPerHour: { min: 1, max: 100_000 },
  allowedOrigins: 20,
} as const;

/** A minted embed session counts as running this long before it is started. */
export const EMBED_PENDING_START_MS = 60_000;

/** The entry that lets any origin (but `null`) frame the page and call its endpoint. */
export const ANY_ORIGIN = "*";

/**
 * What is wrong with an allowed-origins entry (a sentence), or undefined: `*`, or an origin
 * `http(s)://host[:port]` with no path, query, fragment or user info.
 */
export function embedOriginProblem(entry: string): string | undefined {
  if (entry === ANY_ORIGIN) return undefined;
  if (!URL.canParse(entry)) return "must be * or an origin such as https://www.example.com";
  const url = new URL(entry);
  if (url.protocol !== "http:" && url.protocol !== "https:") return "must be an http or https origin";
  if (url.username || url.password || url.search || url.hash || entry.includes("#") || url.pathname !== "/") {
    return "must be an origin only (scheme, host and port), without a path, query or fragment";
  }
  if (/\/$/.test(entry)) return "must be an origin only, without a trailing slash";
  return undefined;
}

/** The entry as browsers send it in Origin (lower-case scheme and host, default port dropped). */
export function normalizeEmbedOrigin(entry: string): string {
  return entry === ANY_ORIGIN ? entry : new URL(entry).origin;
}

/** True when a browser request from `origin` may use the embed (never the opaque origin `null`). */
export function embedOriginAllowed(origin: string, allowed: readonly string[]): boolean {
  if (origin === "null" || !URL.canParse(origin)) return false;
  return allowed.includes(ANY_ORIGIN) || allowed.includes(new URL(origin).origin);
}
