import { createHash, randomBytes } from 'node:crypto';
import { gzip } from 'node:zlib';

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
/**
 * A cached document: the JSON body as the bytes sent (encoded and hashed once
 * when built, so a cache hit writes a stored buffer: no re-serialisation, no
 * UTF-8 encoding, no hashing per request), its ETag and when it was built.
 */
export class CachedDocument {
  constructor(
    /** The JSON body, UTF-8, exactly as sent. */
    readonly bytes: Buffer,
    /** Strong ETag of the body, with quotes. */
    readonly etag: string,
    /** When the document was built (epoch ms). */
    readonly builtAt: number,
    /** For a list: how many items match in all (before limit and offset). */
    readonly total?: number,
  ) {}

  /** The body as text (decoded on demand: the hot path sends `bytes`). */
  get body(): string {
    return this.bytes.toString('utf8');
  }
}

/** What a list build returns: the page, and how many items match in all (`X-Total-Count`). */
export class CountedList {
  constructor(
    readonly items: unknown[],
    readonly total: number,
  ) {}
}

export interface PublicCacheStore {
  /** A store in this process's memory answers at once (no promise on the hot path); a remote one with a promise. */
  get(key: string): CachedDocument | undefined | Promise<CachedDocument | undefined>;
  set(key: string, document: CachedDocument, ttlSeconds: number): Promise<void>;
  invalidate(prefix: string): Promise<void>;
  /** The document stored under `key` (if it still is) now holds `extraBytes` more: its gzip body. */
  grew(key: string, document: CachedDocument, extraBytes: number): void;
}

/** A document's gzip body and its ETag (another representation of the same JSON, so another tag). */
export interface GzipBody {
  readonly bytes: Buffer;
  readonly etag: string;
}

/**
 * Below this a body fits in about one TCP segment: compressing it saves no packet and costs the
 * client a decompression.
 */
export const GZIP_MIN_BYTES = 1400;
/** A gzip body larger than this share of its JSON is not kept (the JSON is sent instead). */
const GZIP_MAX_RATIO = 0.9;
/** Compressions running at once: each holds about 256 KB of zlib state and a thread of the pool. */
const GZIP_MAX_RUNNING = 2;

/**
 * The ETag of a document's gzip body: the document's tag with `-gzip`, weak, since processes on
 * other zlib versions may compress the same JSON to other bytes (a strong tag names exact bytes).
 */
export function gzipEtag(etag: string): string {
  return `W/${etag.slice(0, -1)}-gzip"`;
}

function ownCopy(bytes: Buffer): Buffer {
  const copy = Buffer.allocUnsafeSlow(bytes.length);
  bytes.copy(copy);
  return copy;
}

/** A stored document's compression: how often it was asked for, and its gzip body once made (null: none will be). */
interface GzipVariant {
  readonly key: string;
  asked: number;
  body: GzipBody | null | undefined;
}

export function etagOf(body: string | Buffer): string {
  return `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
}

/** Names this process among all others, and among its own earlier lives (see buildEtag). */
const processTag = randomBytes(9).toString('base64url');
let builds = 0;

/**
 * A strong ETag that names one build rather than hashing its body: no two builds get the same
 * tag, so a tag can only match the very bytes it was sent with. For bodies that carry the time
 * they were built (a bounty's `now`, to the millisecond), which no other build can repeat, a hash
 * could never match across builds either, and it cost 13 % of an uncached bounty list (SHA-256 of
 * its 100 KB). A body that may recur byte for byte (an empty list) keeps `etagOf`.
 */
export function buildEtag(): string {
  builds += 1;
  return `"${processTag}-${builds.toString(36)}"`;
}

/** A document of a JSON text (already serialised, e.g. by a route's compiled serialiser). */
export function documentOfJson(json: string, builtAt: number, total?: number): CachedDocument {
  const bytes = Buffer.from(json, 'utf8');
  return new CachedDocument(bytes, etagOf(bytes), builtAt, total);
}

/** A build's value as a document: serialised with JSON.stringify, unless the build made the document itself. */
export function toDocument(value: unknown, builtAt: number): CachedDocument {
  if (value instanceof CachedDocument) return value;
  if (value instanceof CountedList) return documentOfJson(JSON.stringify(value.items), builtAt, value.total);
  return documentOfJson(JSON.stringify(value), builtAt);
}

export interface MemoryStoreOptions {
  /** Most bytes kept in total: UTF-8 body, gzip body (once made) and key, plus a fixed allowance per entry. */
  maxBytes?: number;
  clock?: () => number;
}

/** What one entry costs beyond its body and key (map slot, ETag, bookkeeping), so tiny entries are not free. */
export const ENTRY_OVERHEAD_BYTES = 256;

/**
 * A bounded in-memory store: query strings vary freely, so the store is capped
 * by the bytes it holds (PUBLIC_CACHE_MAX_BYTES), not by its number of entries,
 * evicting the least recently used.
 */
export class MemoryPublicCacheStore implements PublicCacheStore {
  private readonly entries = new Map<string, { document: CachedDocument; expiresAt: number; bytes: number }>();
  /** The most recently used key (the map's last), which a hit need not move. */
  private newest: string | undefined;
  private heldBytes = 0;
  private evicted = 0;
  private readonly maxBytes: number;
  private readonly clock: () => number;

  constructor(options: MemoryStoreOptions = {}) {
    this.maxBytes = options.maxBytes ?? 64 * 1024 * 1024;
    this.clock = options.clock ?? Date.now;
  }

  get(key: string): CachedDocument | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.clock()) {
      this.delete(key);
      return undefined;
    }
    // Re-inserted to mark it most recently used, unless it is already (a repeated query).
    if (key !== this.newest) {
      this.delete(key);
      this.insert(key, entry);
    }
    return entry.document;
  }

  async set(key: string, document: CachedDocument, ttlSeconds: number): Promise<void> {
    this.delete(key);
    const bytes = document.bytes.length + Buffer.byteLength(key) + ENTRY_OVERHEAD_BYTES;
    if (ttlSeconds <= 0 || bytes > this.maxBytes) return;
    this.insert(key, { document, expiresAt: this.clock() + ttlSeconds * 1000, bytes });
    this.evictBeyondBound();
  }

  grew(key: string, document: CachedDocument, extraBytes: number): void {
    const entry = this.entries.get(key);
    if (entry?.document !== document) return;
    entry.bytes += extraBytes;
    this.heldBytes += extraBytes;
    this.evictBeyondBound();
  }

  async invalidate(prefix: string): Promise<void> {
    for (const key of [...this.entries.keys()]) if (key.startsWith(prefix)) this.delete(key);
  }

  /** Entries held (for tests and diagnostics). */
  get size(): number {
    return this.entries.size;
  }

  /** Bytes held, as counted against the bound (the `stampgate_public_cache_bytes` metric). */
  get bytes(): number {
    return this.heldBytes;
  }

  /** Entries dropped to stay within the bound since start (the `stampgate_public_cache_evictions_total` metric). */
  get evictions(): number {
    return this.evicted;
  }

  private evictBeyondBound(): void {
    while (this.heldBytes > this.maxBytes) {
      this.delete(this.entries.keys().next().value as string);
      this.evicted += 1;
    }
  }

  private insert(key: string, entry: { document: CachedDocument; expiresAt: number; bytes: number }): void {
    this.entries.set(key, entry);
    this.newest = key;
    this.heldBytes += entry.bytes;
  }

  private delete(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    if (key === this.newest) this.newest = undefined;
    this.heldBytes -= entry.bytes;
  }
}

/**
 * What the services use: build-on-miss over a store, with concurrent misses of
 * one key sharing one build, and builds that raced an invalidation not stored
 * (so an import is never undone by a slow request that read the old data).
 */
export class PublicCache {
  private readonly inFlight = new Map<string, Promise<CachedDocument>>();
  /** Stored documents large enough to compress; dropped with the document. */
  private readonly gzipVariants = new WeakMap<CachedDocument, GzipVariant>();
  private gzipRunning = 0;
  private generation = 0;

  constructor(
    readonly store: PublicCacheStore,
    readonly ttlSeconds: number,
    private readonly clock: () => number = Date.now,
    /** Told of every invalidation made here, to pass it on to other processes. */
    private readonly announce: (prefixes: string[]) => Promise<void> = async () => {},
  ) {}

  /**
   * The document of `key`, built on a miss. A hit in a memory store is answered at once, not as a
   * promise: most requests are hits, and the promises of this call and of the store's cost more
   * than the hit itself.
   */
  document(key: string, build: () => Promise<unknown>): CachedDocument | Promise<CachedDocument> {
    if (this.ttlSeconds <= 0) return build().then((value) => toDocument(value, this.clock()));
    // Taken before anything waits, so an invalidation from here on keeps this build out of the store.
    const generation = this.generation;
    const hit = this.store.get(key);
    if (hit instanceof CachedDocument) return hit;
    if (hit === undefined) return this.miss(key, build, generation);
    return hit.then((found) => found ?? this.miss(key, build, generation));
  }

  private async miss(key: string, build: () => Promise<unknown>, generation: number): Promise<CachedDocument> {
    const pending = this.inFlight.get(key);
    if (pending) return pending;
    const promise = (async () => {
      const document = toDocument(await build(), this.clock());
      if (generation === this.generation) {
        await this.store.set(key, document, this.ttlSeconds);
        if (document.bytes.length >= GZIP_MIN_BYTES) this.gzipVariants.set(document, { key, asked: 0, body: undefined });
      }
      return document;
    })();
    this.inFlight.set(key, promise);
    try {
      return await promise;
    } finally {
      if (this.inFlight.get(key) === promise) this.inFlight.delete(key);
    }
  }

  /**
   * The gzip body of a stored document, for a client that accepts gzip; undefined while there is
   * none (send the JSON). It is made once, on the document's second request, in the thread pool:
   * a document asked for only once (a query string seen once, as a crawler's or an attacker's)
   * never costs a compression, and no request waits for one.
   */
  gzipOf(document: CachedDocument): GzipBody | undefined {
    const variant = this.gzipVariants.get(document);
    if (variant === undefined || variant.body === null) return undefined;
    if (variant.body !== undefined) return variant.body;
    variant.asked += 1;
    if (variant.asked !== 2) return undefined;
    // At the limit, a later request of this document starts it.
    if (this.gzipRunning >= GZIP_MAX_RUNNING) variant.asked -= 1;
    else this.compress(document, variant);
    return undefined;
  }

  private compress(document: CachedDocument, variant: GzipVariant): void {
    this.gzipRunning += 1;
    gzip(document.bytes, (error, compressed) => {
      this.gzipRunning -= 1;
      if (error || compressed.length > document.bytes.length * GZIP_MAX_RATIO) {
        variant.body = null;
        return;
      }
      // A small result shares an 8 KB slab of Node's buffer pool, which it would keep alive uncounted.
      const bytes = compressed.length === compressed.buffer.byteLength ? compressed : ownCopy(compressed);
      variant.body = { bytes, etag: gzipEtag(document.etag) };
      this.store.grew(variant.key, document, bytes.length);
    });
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
  /** The legacy on-chain bounty read (chain data: expires by TTL, no import changes it). */
  legacyBounty: 'legacy-bounty:',
} as const;
