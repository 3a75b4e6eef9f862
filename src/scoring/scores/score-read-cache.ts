import { singleScoreJson } from './score-json.js';
import type { ScoreRow } from './scores.repository.js';

export interface ScoreReadCacheOptions {
  /** How long an entry is served (SCORE_CACHE_TTL_MS); 0 = no cache. A bound for a lost announcement, not the invalidation. */
  ttlMs: number;
  /** Most entries kept (SCORE_CACHE_MAX_ENTRIES); the oldest go first. */
  maxEntries: number;
  /**
   * Whether this process hears every score write of the others right now: null when it cannot
   * (the notice connection is down: nothing is served from memory), else a number that changes
   * whenever writes may have been missed or made unseen (the cache is emptied). On SQLite it is
   * the database file's change counter, on PostgreSQL the notice connection's generation.
   */
  epoch?: () => number | null;
  clock?: () => number;
}

interface Entry {
  accountId: number;
  body: string;
  expiresAt: number;
}

/**
 * The single-score read's body per (scorer, address), pre-serialised once per record version:
 * a hit costs a map lookup and no query, no formatting. Kept as a string, not a Buffer: Node
 * writes a string body in one write with the response head, a Buffer as a second chunk of a
 * corked writev (2 % more CPU per hit in paired runs).
 *
 * Only finished records (DONE, ERROR) are kept. Every write of a score row announces
 * `scoreChanged` on the bus after it commits and before it is acknowledged (the submission's
 * answer, the job's settled signal, the v2 response), and every process drops its entry on
 * hearing it; on a bus with peers the publish resolves only once every process answering from
 * memory has heard it (events/bus-peers.ts). A read that raced an invalidation is not stored (a generation counter, taken
 * before the read), so a slow read of the old row can never put it back. Other processes' writes
 * are seen through `epoch`: while it cannot vouch for them the cache is bypassed, and when it
 * moves (another SQLite process committed, the notice connection came back) it is emptied.
 */
export class ScoreReadCache {
  readonly #entries = new Map<string, Entry>();
  readonly #ttlMs: number;
  readonly #maxEntries: number;
  readonly #clock: () => number;
  readonly #epochOf: () => number | null;
  #epoch: number | null = null;
  #generation = 0;

  constructor(options: ScoreReadCacheOptions) {
    this.#ttlMs = options.ttlMs;
    this.#maxEntries = options.maxEntries;
    this.#clock = options.clock ?? Date.now;
    this.#epochOf = options.epoch ?? (() => 0);
  }

  get enabled(): boolean {
    return this.#ttlMs > 0;
  }

  /** Taken before reading the row that `store` will be given. */
  get generation(): number {
    this.#sync();
    return this.#generation;
  }

  /** False while the cache cannot be trusted (see `epoch`); empties it when the epoch moved. */
  #sync(): boolean {
    const epoch = this.#epochOf();
    if (epoch === this.#epoch && epoch !== null) return true;
    this.#epoch = epoch;
    this.#generation += 1;
    this.#entries.clear();
    return epoch !== null;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The body for this caller's account, when held and fresh. */
  lookup(scorerId: number, address: string, accountId: number): string | undefined {
    if (!this.enabled || !this.#sync()) return undefined;
    const entry = this.#entries.get(keyOf(scorerId, address));
    if (!entry || entry.accountId !== accountId) return undefined;
    if (entry.expiresAt <= this.#clock()) {
      this.#entries.delete(keyOf(scorerId, address));
      return undefined;
    }
    return entry.body;
  }

  /** The body of `row`; kept when finished and no invalidation happened since `generation`. */
  store(generation: number, accountId: number, row: ScoreRow): string {
    const body = singleScoreJson(row);
    if (!this.enabled || !this.#sync() || generation !== this.#generation || (row.status !== 'DONE' && row.status !== 'ERROR')) return body;
    const key = keyOf(row.scorer_id, row.address);
    this.#entries.delete(key);
    while (this.#entries.size >= this.#maxEntries) this.#entries.delete(this.#entries.keys().next().value as string);
    this.#entries.set(key, { accountId, body, expiresAt: this.#clock() + this.#ttlMs });
    return body;
  }

  /** A score row was written (heard on the bus). */
  invalidate(scorerId: number, address: string): void {
    this.#generation += 1;
    this.#entries.delete(keyOf(scorerId, address));
  }

  /** A scorer changed (settings, account): none of its scores is kept. */
  forgetScorer(scorerId: number): void {
    this.#generation += 1;
    const prefix = `${scorerId}:`;
    for (const key of [...this.#entries.keys()]) if (key.startsWith(prefix)) this.#entries.delete(key);
  }
}

const keyOf = (scorerId: number, address: string) => `${scorerId}:${address}`;
