/**
 * `npx tsx bench/rate-limit-store.ts`: cost per request of the per-process rate-limit store
 * (src/http/rate-limit-store.ts) against an address-rotating client, at 1k, 100k and 1M live keys.
 *
 * Each size is brought to a steady state first: one new key per millisecond of a window of
 * `size` ms, so every further request opens a new window and one old window ends, which is the
 * worst case (a client that never repeats an address). Then two figures per size:
 *   new key       a request from an address not seen before (insert + expiry of the oldest)
 *   known key     a request from an address already counted (lookup only, after the expiry check)
 * The sweep the store used before (scan every key on each insert once there are more than
 * 100,000) is measured beside it for comparison; its runs are short because each of its
 * requests is a full scan.
 *
 * Environment: BENCH_RATE_LIMIT_SIZES (comma list, default 1000,100000,1000000).
 */
import { WindowCounters } from '../src/http/rate-limit-store.js';

interface Store {
  incr(key: string, windowMs: number, now: number): { current: number; ttl: number };
  /** Brings the store to `size` open windows (the old store skips its sweeps, or filling would take hours). */
  fill?(size: number, windowMs: number): void;
}

/** The store as it was: a map swept in full on every insert past 100,000 keys. */
class SweepingCounters implements Store {
  private readonly local = new Map<string, { current: number; resetAt: number }>();
  fill(size: number, windowMs: number) {
    for (let i = 0; i < size; i++) this.local.set(address(i), { current: 1, resetAt: i + windowMs });
  }
  incr(key: string, windowMs: number, now: number) {
    let counter = this.local.get(key);
    if (!counter || counter.resetAt <= now) {
      counter = { current: 0, resetAt: now + windowMs };
      this.local.set(key, counter);
      if (this.local.size > 100_000) {
        for (const [k, c] of this.local) if (c.resetAt <= now) this.local.delete(k);
      }
    }
    counter.current += 1;
    return { current: counter.current, ttl: counter.resetAt - now };
  }
}

const sizes = (process.env.BENCH_RATE_LIMIT_SIZES ?? '1000,100000,1000000').split(',').map(Number);

function address(i: number): string {
  return `ip:10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}:${i}`;
}

function measure(store: Store, size: number, ops: number): { newKeyUs: number; knownKeyUs: number } {
  const windowMs = size;
  // Fill: one new key per millisecond, so that `size` windows are open at the end.
  if (store.fill) store.fill(size, windowMs);
  else for (let i = 0; i < size; i++) store.incr(address(i), windowMs, i);
  let now = size;
  let next = size;
  const started = process.hrtime.bigint();
  for (let i = 0; i < ops; i++) store.incr(address(next++), windowMs, now++);
  const newKeyNs = Number(process.hrtime.bigint() - started) / ops;
  // Known keys: the most recent ones, still open; time stands still so that nothing new expires.
  const knownStarted = process.hrtime.bigint();
  for (let i = 0; i < ops; i++) store.incr(address(next - 1 - (i % 1000)), windowMs, now);
  const knownKeyNs = Number(process.hrtime.bigint() - knownStarted) / ops;
  return { newKeyUs: newKeyNs / 1000, knownKeyUs: knownKeyNs / 1000 };
}

const rows: string[][] = [];
for (const size of sizes) {
  const heap = measure(new WindowCounters(), size, 200_000);
  const sweepOps = size > 100_000 ? 50 : size > 10_000 ? 500 : 200_000;
  const sweep = measure(new SweepingCounters(), size, sweepOps);
  rows.push([
    size.toLocaleString('en'),
    heap.newKeyUs.toFixed(2),
    heap.knownKeyUs.toFixed(2),
    sweep.newKeyUs.toFixed(2),
    sweep.knownKeyUs.toFixed(2),
  ]);
}

const header = ['live keys', 'new key µs/op', 'known key µs/op', 'before: new key µs/op', 'before: known key µs/op'];
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
const line = (cells: string[]) => cells.map((c, i) => c.padStart(widths[i]!)).join('  ');
console.log(`rate-limit store, Node ${process.version}: steady state with one new address per request`);
console.log(line(header));
for (const row of rows) console.log(line(row));
