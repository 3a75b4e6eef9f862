import { createHash } from 'node:crypto';

/**
 * Response cache of the public data API. A document is a serialized JSON body
 * with its ETag and the time it was built; lists and exports are served from
 * it for up to `PUBLIC_CACHE_TTL` seconds.
 *
 * `PublicCacheStore` is the storage seam; the store is in memory, per process.
 * An import's invalidation reaches the other processes (API servers, and the
 * server when the import ran in the CLI) through the Redis invalidation bus when
 * REDIS_URL is set; without it they serve what they cached for up to
 * `PUBLIC_CACHE_TTL` seconds.
 */
export interface CachedDocument {
  /** The JSON body, exactly as sent. */
  body: string;
  /** Strong ETag of `body`, with quotes. */
  etag: string;
  /** When the document was built (epoch ms). */
  builtAt: number;
}

export interface PublicCacheStore {
  get(key: string): Promise<CachedDocument | undefined>;
  set(key: string, document: CachedDocument, ttlSeconds: number): Promise<void>;
  invalidate(prefix: string): Promise<void>;
}

export function etagOf(body: string): string {
  return `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
}

export function toDocument(value: unknown, builtAt: number): CachedDocument {
  const body = JSON.stringify(value);
  return { body, etag: etagOf(body), builtAt };
}

export interface MemoryStoreOptions {
  /** Most documents kept; the least recently used goes first. */
  maxEntries?: number;
  /** Most body bytes (UTF-16 code units) kept in total. */
  maxChars?: number;
  clock?: () => number;
}

/**
 * A bounded in-memory store: query strings vary freely, so entries are capped
 * by count and by size, evicting the least recently used.
 */
export class MemoryPublicCacheStore implements PublicCacheStore {
  private readonly entries = new Map<string, { document: CachedDocument; expiresAt: number }>();
  private chars = 0;
  private readonly maxEntries: number;
  private readonly maxChars: number;
  private readonly clock: () => number;

  constructor(options: MemoryStoreOptions = {}) {
    this.maxEntries = options.maxEntries ?? 2000;
    this.maxChars = options.maxChars ?? 64 * 1024 * 1024;
    this.clock = options.clock ?? Date.now;
  }

  async get(key: string): Promise<CachedDocument | undefined> {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.delete(key);
    if (entry.expiresAt <= this.clock()) return undefined;
    // Re-inserted to mark it most recently used.
    this.insert(key, entry);
    return entry.document;
  }

  async set(key: string, document: CachedDocument, ttlSeconds: number): Promise<void> {
    this.delete(key);
    if (ttlSeconds <= 0 || document.body.length > this.maxChars) return;
    this.insert(key, { document, expiresAt: this.clock() + ttlSeconds * 1000 });
    while (this.entries.size > this.maxEntries || this.chars > this.maxChars) {
      this.delete(this.entries.keys().next().value as string);
    }
  }

  async invalidate(prefix: string): Promise<void> {
    for (const key of [...this.entries.keys()]) if (key.startsWith(prefix)) this.delete(key);
  }

  /** Entries held (for tests and diagnostics). */
  get size(): number {
    return this.entries.size;
  }

  private insert(key: string, entry: { document: CachedDocument; expiresAt: number }): void {
    this.entries.set(key, entry);
    this.chars += entry.document.body.length;
  }

  private delete(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.chars -= entry.document.body.length;
  }
}

/**
 * What the services use: build-on-miss over a store, with concurrent misses of
 * one key sharing one build, and builds that raced an invalidation not stored
 * (so an import is never undone by a slow request that read the old data).
 */
export class PublicCache {
  private readonly inFlight = new Map<string, Promise<CachedDocument>>();
  private generation = 0;

  /** Told of every invalidation made here, to pass it on to other processes. */
  announce: (prefixes: string[]) => Promise<void> = async () => {};

  constructor(
    readonly store: PublicCacheStore,
    readonly ttlSeconds: number,
    private readonly clock: () => number = Date.now,
  ) {}

  async document(key: string, build: () => Promise<unknown>): Promise<CachedDocument> {
    if (this.ttlSeconds <= 0) return toDocument(await build(), this.clock());
    // Taken before anything awaits, so an invalidation from here on keeps this build out of the store.
    const generation = this.generation;
    const hit = await this.store.get(key);
    if (hit) return hit;
    const pending = this.inFlight.get(key);
    if (pending) return pending;
    const promise = (async () => {
      const document = toDocument(await build(), this.clock());
      if (generation === this.generation) await this.store.set(key, document, this.ttlSeconds);
      return document;
    })();
    this.inFlight.set(key, promise);
    try {
      return await promise;
    } finally {
      if (this.inFlight.get(key) === promise) this.inFlight.delete(key);
    }
  }

  /** Seconds a client may still reuse `document` (what is left of the server-side TTL). */
  remainingSeconds(document: CachedDocument): number {
    return Math.max(0, this.ttlSeconds - Math.ceil((this.clock() - document.builtAt) / 1000));
  }

  async invalidate(prefixes: string[]): Promise<void> {
    await this.forget(prefixes);
    await this.announce(prefixes);
  }

  /** Drops this process's documents under `prefixes` (an invalidation heard from another process). */
  async forget(prefixes: string[]): Promise<void> {
    this.generation += 1;
    for (const prefix of prefixes) {
      for (const key of [...this.inFlight.keys()]) if (key.startsWith(prefix)) this.inFlight.delete(key);
      await this.store.invalidate(prefix);
    }
  }
}

/** Key prefixes, one per data family, so an import drops only what it changed. */
export const cachePrefix = {
  bounties: 'bounties:',
  grants: 'grants:',
  exports: 'exports:',
} as const;
