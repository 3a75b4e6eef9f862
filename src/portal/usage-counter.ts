import type { KeyUsageDailyTable } from '../db/tables/portal.js';
import type { UsageRepository } from './usage.repository.js';

const DAY_MS = 86_400_000;

/** Days since 1970-01-01 of an epoch-millisecond time, in UTC. */
export function utcDay(epochMs: number): number {
  return Math.floor(epochMs / DAY_MS);
}

/** `YYYY-MM-DD` of a UTC day number. */
export function dayText(day: number): string {
  return new Date(day * DAY_MS).toISOString().slice(0, 10);
}

export interface UsageCounterOptions {
  flushMs: number;
  clock?: () => number;
  log?: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void };
}

/**
 * Requests and 429 answers per API key and UTC day, counted off the request path: a request
 * only bumps a number in memory; every `flushMs` the totals are added to the database in one
 * additive upsert (so several processes add up) and at shutdown. A failed flush keeps the
 * counts for the next one: an outage delays usage figures, it loses none (unless the process dies).
 */
export function usageCounter(repo: UsageRepository, options: UsageCounterOptions) {
  const clock = options.clock ?? Date.now;
  let pending = new Map<string, KeyUsageDailyTable>();
  let flushing: Promise<void> | null = null;
  let failing = false;
  let timer: NodeJS.Timeout | null = null;

  function merge(into: Map<string, KeyUsageDailyTable>, row: KeyUsageDailyTable): void {
    const id = `${row.key_id}:${row.day}`;
    const existing = into.get(id);
    if (existing) {
      existing.requests += row.requests;
      existing.rate_limited += row.rate_limited;
    } else into.set(id, { ...row });
  }

  async function writeOut(): Promise<void> {
    if (pending.size === 0) return;
    const batch = pending;
    pending = new Map();
    try {
      await repo.add([...batch.values()]);
      if (failing) options.log?.info({}, 'usage counters are being stored again');
      failing = false;
    } catch (error) {
      for (const row of batch.values()) merge(pending, row);
      if (!failing) options.log?.warn({ err: error }, 'could not store usage counters; keeping them for the next attempt');
      failing = true;
    }
  }

  const counter = {
    /** Counts one request of a key (a 429 answer counts as a request and as rate-limited). */
    record(keyId: number, rateLimited: boolean): void {
      merge(pending, { key_id: keyId, day: utcDay(clock()), requests: 1, rate_limited: rateLimited ? 1 : 0 });
    },

    /** Adds what is counted so far to the database (one flush at a time). */
    async flush(): Promise<void> {
      while (flushing) await flushing;
      flushing = writeOut().finally(() => {
        flushing = null;
      });
      await flushing;
    },

    /** This process's counts not yet flushed, so that a reader sees its own requests at once. */
    unflushed(keyIds: ReadonlySet<number>, fromDay: number, toDay: number): KeyUsageDailyTable[] {
      return [...pending.values()].filter((row) => keyIds.has(row.key_id) && row.day >= fromDay && row.day <= toDay);
    },

    start(): void {
      if (timer) return;
      timer = setInterval(() => void counter.flush(), options.flushMs);
      timer.unref();
    },

    /** Stops the timer and flushes what is left. */
    async stop(): Promise<void> {
      if (timer) clearInterval(timer);
      timer = null;
      await counter.flush();
    },
  };
  return counter;
}

export type UsageCounter = ReturnType<typeof usageCounter>;
