import { availableParallelism } from 'node:os';
import { constants, PerformanceObserver } from 'node:perf_hooks';
import { type AbuseRequest, describeRequest } from './requests.js';

/**
 * CPU time per request of a server running in this process (`inject`), worst first: the fuzz
 * pass must find no request that costs more than a few milliseconds before it is answered.
 * process.cpuUsage counts every thread of the process, so a figure is an upper bound.
 */
/** Methods whose repetition does what the first request did (RFC 9110 idempotent, and our PATCH sets fields). */
const repeatable = new Set(['GET', 'HEAD', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/**
 * Full (mark-compact) collections of this process, as [start, end] in performance.now() time:
 * their cost is the whole heap's (the test's own included), not the request's they happened to
 * interrupt. Minor collections stay in a request's figure: their cost follows what
 * the request itself allocated.
 */
const majorCollections: [number, number][] = [];
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    if ((entry as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) majorCollections.push([entry.startTime, entry.startTime + entry.duration]);
  }
}).observe({ entryTypes: ['gc'] });

/**
 * CPU milliseconds of the full collections inside [from, to], at most: a collection stops this
 * thread's JavaScript (the request's work waits) while V8's helper threads mark and compact beside
 * it, so every core's time during the pause is the collection's.
 */
function majorCollectionMs(from: number, to: number): number {
  let ms = 0;
  for (const [start, end] of majorCollections) ms += Math.max(0, Math.min(end, to) - Math.max(start, from));
  return ms * cores;
}
const cores = availableParallelism();

interface Measured {
  id: string;
  request: AbuseRequest;
  ms: number;
  status: number;
  /** When it ran (performance.now()), to find the full collections it met. */
  window?: [number, number];
}

export class CpuCosts {
  private worstCases: Measured[] = [];
  count = 0;

  constructor(private readonly keep = 10) {}

  async measure<T>(id: string, request: AbuseRequest, work: () => Promise<T>): Promise<T> {
    const started = performance.now();
    const before = process.cpuUsage();
    const result = await work();
    const used = process.cpuUsage(before);
    this.add(id, request, (used.user + used.system) / 1000, (result as { statusCode?: number } | null)?.statusCode ?? 0, [started, performance.now()]);
    return result;
  }

  add(id: string, request: AbuseRequest, ms: number, status = 0, window?: [number, number]): void {
    this.count++;
    if (this.worstCases.length >= this.keep && ms <= this.worstCases[this.worstCases.length - 1]!.ms) return;
    this.worstCases.push({ id, request, ms, status, window });
    this.worstCases.sort((a, b) => b.ms - a.ms);
    this.worstCases.length = Math.min(this.worstCases.length, this.keep);
  }

  worst(): { id: string; request: string; ms: number; fullGcMs: number }[] {
    return this.worstCases.map((w) => ({ id: w.id, request: describeRequest(w.request), ms: w.ms, fullGcMs: this.#fullGcMs(w) }));
  }

  #fullGcMs(w: Measured): number {
    return w.window ? majorCollectionMs(w.window[0], w.window[1]) : 0;
  }

  /**
   * The requests over `limitMs` (less the full collections they met), a refused one sent again up to `attempts` times, each time to a
   * new app on the same database (`fresh`: every in-memory cache empty, so a replay redoes the
   * work), and kept at its lowest cost: a request that is expensive stays over, one that met a
   * garbage collection or a busy machine (other threads' CPU counts too) does not. Replayed:
   * refusals (they changed nothing) and idempotent methods (a repeat meets the state the first
   * send left, doing the same work). An accepted POST is replayed too, and a replay counts only
   * when it is accepted again with the same status (the same work: a re-submission re-queues, a
   * create creates another); one refused the second time (a used nonce, a duplicate) leaves the
   * request standing as measured. Replays run at the end of the file, so what they write is seen
   * by no other test.
   */
  async confirmedOver(
    limitMs: number,
    fresh: () => Promise<{ send(request: AbuseRequest): Promise<{ statusCode: number }>; close(): Promise<void> }>,
    attempts = 3,
  ): Promise<{ id: string; request: string; ms: number }[]> {
    const over: { id: string; request: string; ms: number }[] = [];
    for (const w of this.worstCases.filter((c) => c.ms - this.#fullGcMs(c) > limitMs)) {
      let lowest = w.ms - this.#fullGcMs(w);
      // A streamed body was consumed by the first send: such a request stands as measured too.
      const replayable = w.request.payload === undefined || typeof w.request.payload === 'string' || Buffer.isBuffer(w.request.payload);
      const sameWorkOnly = w.status < 400 && !repeatable.has(w.request.method);
      for (let i = 0; replayable && i < attempts && lowest > limitMs; i++) {
        const app = await fresh();
        try {
          const started = performance.now();
          const before = process.cpuUsage();
          const res = await app.send(w.request);
          const used = process.cpuUsage(before);
          const ms = (used.user + used.system) / 1000 - majorCollectionMs(started, performance.now());
          if (!sameWorkOnly || res.statusCode === w.status) lowest = Math.min(lowest, ms);
        } finally {
          await app.close();
        }
      }
      if (lowest > limitMs) over.push({ id: w.id, request: describeRequest(w.request), ms: lowest });
    }
    return over;
  }
}
