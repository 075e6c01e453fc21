/**
 * In-process KV bucket with NATS KV semantics: one revision sequence per bucket, deletes leave a marker
 * (so `update` against the marker's revision works, `get` returns null), and a bucket-wide TTL after
 * which entries, markers included, disappear.
 */
import { KvConflictError, type KvEntry, type KvStore } from "../bus.js";
import { assertExpectedRevision, assertKey } from "../kv-names.js";

interface Stored {
  /** null marks a deleted key. */
  value: Uint8Array | null;
  revision: number;
  writtenAt: number;
}

export class MemoryKvBucket {
  readonly #entries = new Map<string, Stored>();
  #revision = 0;
  #ttlMs: number | undefined;

  constructor(
    readonly name: string,
    ttlMs: number | undefined,
    private readonly now: () => number = Date.now,
  ) {
    this.#ttlMs = ttlMs;
  }

  /** Opening an existing bucket with other options updates its TTL, like a stream update. */
  setTtl(ttlMs: number | undefined): void {
    this.#ttlMs = ttlMs;
  }

  get(key: string): KvEntry | null {
    assertKey(key);
    const stored = this.#live(key);
    return stored?.value ? { value: stored.value.slice(), revision: stored.revision } : null;
  }

  create(key: string, value: Uint8Array): number {
    assertKey(key);
    if (this.#live(key)?.value) throw new KvConflictError(this.name, key);
    return this.#write(key, value);
  }

  update(key: string, value: Uint8Array, expectedRevision: number): number {
    assertKey(key);
    assertExpectedRevision(expectedRevision);
    if (this.#live(key)?.revision !== expectedRevision) throw new KvConflictError(this.name, key);
    return this.#write(key, value);
  }

  put(key: string, value: Uint8Array): number {
    assertKey(key);
    return this.#write(key, value);
  }

  delete(key: string): void {
    assertKey(key);
    this.#write(key, null);
  }

  #write(key: string, value: Uint8Array | null): number {
    const revision = ++this.#revision;
    // Re-inserting keeps the map in write order, so expired entries are always at the front.
    this.#entries.delete(key);
    this.#entries.set(key, { value: value ? value.slice() : null, revision, writtenAt: this.now() });
    this.#sweep();
    return revision;
  }

  #sweep(): void {
    if (this.#ttlMs === undefined) return;
    for (const [key, stored] of this.#entries) {
      if (this.now() - stored.writtenAt < this.#ttlMs) return;
      this.#entries.delete(key);
    }
  }

  #live(key: string): Stored | undefined {
    const stored = this.#entries.get(key);
    if (stored && this.#ttlMs !== undefined && this.now() - stored.writtenAt >= this.#ttlMs) {
      this.#entries.delete(key);
      return undefined;
    }
    return stored;
  }
}

/** The async KvStore view of a bucket, refusing work once the bus is closed. */
export function memoryKvStore(bucket: MemoryKvBucket, assertUsable: () => void): KvStore {
  const op = async <T>(fn: () => T): Promise<T> => {
    assertUsable();
    return fn();
  };
  return {
    get: (key) => op(() => bucket.get(key)),
    create: (key, value) => op(() => bucket.create(key, value)),
    update: (key, value, expectedRevision) => op(() => bucket.update(key, value, expectedRevision)),
    put: (key, value) => op(() => bucket.put(key, value)),
    delete: (key) => op(() => bucket.delete(key)),
  };
}
