/** Bucket and key rules of NATS KV, applied by both implementations. */
import type { KvOptions } from "./bus.js";

const BUCKET_RE = /^[-\w]+$/;
const KEY_RE = /^[-/=.\w]+$/;

export function assertBucketName(bucket: string): void {
  if (!BUCKET_RE.test(bucket)) throw new Error(`invalid kv bucket name "${bucket}"`);
}

export function assertKey(key: string): void {
  if (!KEY_RE.test(key) || key.startsWith(".") || key.endsWith(".") || key.includes("..")) {
    throw new Error(`invalid kv key "${key}"`);
  }
}

export function assertExpectedRevision(revision: number): void {
  if (!Number.isInteger(revision) || revision <= 0) {
    throw new Error(`expected revision must be a positive integer, got ${revision}`);
  }
}

/** The bucket TTL, or undefined for none (0 also means none). */
export function bucketTtlMs(options: KvOptions): number | undefined {
  const { ttlMs } = options;
  if (ttlMs === undefined || ttlMs === 0) return undefined;
  if (!(ttlMs > 0)) throw new Error(`invalid kv ttlMs ${ttlMs}`);
  return ttlMs;
}
