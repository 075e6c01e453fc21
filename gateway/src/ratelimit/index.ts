export { rateLimitHeaders, setRateLimitHeaders } from "./headers.js";
export {
  KvCounterContentionError,
  KvCounterStore,
  type KvCounterStoreOptions,
  kvKeyFor,
  LEASE_SHARE_OF_LIMIT,
  openKvCounterStore,
  RATE_LIMIT_BUCKET,
  RATE_LIMIT_BUCKET_TTL_MS,
} from "./kv-store.js";
export {
  counterKey,
  type RateLimitDecision,
  RateLimiter,
  type RateLimiterOptions,
  type RateLimitHit,
  type RateLimitLogger,
  WINDOW_MS,
} from "./limiter.js";
export { MemoryCounterStore } from "./memory-store.js";
export type { CounterStore } from "./store.js";
