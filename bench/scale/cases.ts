/**
 * The scale bench's cases, run on a small data set and on the scale set in one run: latency
 * (p50, p99) and server CPU per request of the hot reads and a submission, the two integrator
 * walks (rows/s, server RSS over the walk); then PASS/FAIL per target. The uncached bounty list,
 * the batch and the migration step are cases of their own (bounty-case.ts, batch-case.ts,
 * migration-probe.ts).
 * Requests are sent one at a time: the figures are the cost of one request at that size, not
 * the server's throughput. Both servers run at once and take turns (see measure).
 */
import { readFileSync } from 'node:fs';
import type { ScaleDataset } from './build.js';
import { freshScorer, openScaleContext } from './context.js';
import { DAY_MS, scaleAddress, unitRandom } from './generator.js';
import { startScaleServer, type ScaleServer } from './server.js';

const REQUESTS = 200;
/** Requests per block: the two sets take turns block by block. */
const BLOCK = 25;
const WARM_PAGES = 10;

interface LatencyFigures {
  p50: number;
  p99: number;
  cpuMsPerRequest: number;
}

interface WalkFigures {
  rows: number;
  rowsPerSecond: number;
  rssStartMb: number;
  rssMinMb: number;
  rssMaxMb: number;
}

type Figures = Record<string, LatencyFigures | WalkFigures>;

function percentile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

type Requester = (i: number) => Promise<Response>;

interface Samples {
  times: number[];
  cpuMs: number;
}

/** `count` requests from index `from`, one at a time, added to `samples`. */
async function sample(server: ScaleServer, request: Requester, from: number, count: number, samples: Samples): Promise<void> {
  const cpuBefore = server.cpuMs();
  for (let i = from; i < from + count; i++) {
    const start = performance.now();
    const res = await request(i);
    const body = await res.text();
    if (!res.ok) throw new Error(`HTTP ${res.status}: ${body.slice(0, 300)}`);
    samples.times.push(performance.now() - start);
  }
  samples.cpuMs += server.cpuMs() - cpuBefore;
}

function figuresOf(samples: Samples): LatencyFigures {
  const times = [...samples.times].sort((a, b) => a - b);
  const round = (n: number) => Math.round(n * 100) / 100;
  return { p50: round(percentile(times, 0.5)), p99: round(percentile(times, 0.99)), cpuMsPerRequest: round(samples.cpuMs / times.length) };
}

async function walk(server: ScaleServer, first: string, page: (body: unknown) => { rows: number; next: string | null }, headers: Record<string, string>): Promise<WalkFigures> {
  let path: string | null = first;
  let rows = 0;
  let pages = 0;
  const rssStartMb = server.rssMb();
  let rssMin = Number.POSITIVE_INFINITY;
  let rssMax = 0;
  const start = performance.now();
  while (path) {
    const res = await fetch(server.base + path, { headers });
    if (!res.ok) throw new Error(`HTTP ${res.status} on ${path}: ${(await res.text()).slice(0, 300)}`);
    const step = page(await res.json());
    rows += step.rows;
    pages += 1;
    path = step.rows === 0 ? null : step.next;
    // From the tenth page on: the heap grows to its working size over the first pages at any size.
    if (pages >= WARM_PAGES) {
      const rss = server.rssMb();
      rssMin = Math.min(rssMin, rss);
      rssMax = Math.max(rssMax, rss);
    }
  }
  const seconds = (performance.now() - start) / 1000;
  if (pages < WARM_PAGES) rssMin = rssMax = server.rssMb();
  return { rows, rowsPerSecond: Math.round(rows / seconds), rssStartMb: Math.round(rssStartMb), rssMinMb: Math.round(rssMin), rssMaxMb: Math.round(rssMax) };
}

/**
 * Two scorers created through the service for this run: the measured submissions go to the
 * first, the warm-up ones to the second, so every measured submission is a first scoring
 * whatever ran before on the cached set.
 */
async function submissionScorers(dataset: ScaleDataset): Promise<[number, number]> {
  const ctx = await openScaleContext(dataset);
  try {
    return [await freshScorer(ctx, dataset, 'scale submission'), await freshScorer(ctx, dataset, 'scale submission warm-up')];
  } finally {
    await ctx.close();
  }
}

function requesters(dataset: ScaleDataset, server: ScaleServer, submitTo: [number, number]): Record<string, Requester> {
  const headers = { 'x-api-key': dataset.apiKey, 'content-type': 'application/json' };
  const [scorer] = dataset.scorerIds;
  const pool = (JSON.parse(readFileSync(dataset.poolFile, 'utf8')) as { address: string }[]).map((d) => d.address);
  const generated = (i: number) => scaleAddress(Math.floor(unitRandom('bench-address', i) * dataset.counts.addresses));
  const get = (path: string) => fetch(server.base + path, { headers });
  const middle = encodeURIComponent(new Date(dataset.builtAt - 30 * DAY_MS).toISOString());
  return {
    'score read': (i) => get(`/registry/score/${scorer}/${generated(i)}`),
    // Each pool address once per scorer: requests 0-199 (measured) to the first, the warm-up's to the second.
    submission: (i) =>
      fetch(`${server.base}/registry/submit-passport`, { method: 'POST', headers, body: JSON.stringify({ address: pool[i % pool.length], scorer_id: String(submitTo[i < REQUESTS ? 0 : 1]) }) }),
    'v2 score': (i) => get(`/v2/stamps/${scorer}/score/${generated(100_000 + i)}`),
    history: (i) => get(`/v2/stamps/${scorer}/score/${generated(200_000 + i)}/history?created_at=${middle}`),
    'stamps page': (i) => get(`/registry/stamps/${pool[i % pool.length]}?limit=10`),
  };
}

async function walks(dataset: ScaleDataset, server: ScaleServer): Promise<Figures> {
  const headers = { 'x-api-key': dataset.apiKey };
  const [scorer] = dataset.scorerIds;
  return {
    'score-list sync': await walk(server, `/registry/score/${scorer}?limit=1000`, (body) => {
      const { items } = body as { items: { last_score_timestamp: string }[] };
      const last = items.at(-1)?.last_score_timestamp;
      return { rows: items.length, next: last ? `/registry/score/${scorer}?limit=1000&last_score_timestamp_gt=${encodeURIComponent(last)}` : null };
    }, headers),
    'event feed': await walk(server, `/v2/scorers/${scorer}/events?after=0&limit=1000`, (body) => {
      const { items, next } = body as { items: unknown[]; next: string };
      return { rows: items.length, next };
    }, headers),
  };
}

/**
 * Both sets served at once and each case's requests sent in alternating blocks (small, scale,
 * small, …): a load on the machine that rises or falls during the run reaches both sets alike.
 */
async function measure(small: ScaleDataset, large: ScaleDataset, log: (line: string) => void): Promise<[Figures, Figures]> {
  const servers = [await startScaleServer(small, { PUBLIC_CACHE_TTL: '0' }), await startScaleServer(large, { PUBLIC_CACHE_TTL: '0' })] as const;
  try {
    const cases = [requesters(small, servers[0], await submissionScorers(small)), requesters(large, servers[1], await submissionScorers(large))] as const;
    const figures: [Figures, Figures] = [{}, {}];
    for (const name of Object.keys(cases[0])) {
      const samples: [Samples, Samples] = [{ times: [], cpuMs: 0 }, { times: [], cpuMs: 0 }];
      // A few unmeasured requests first: compiled statements and the JIT warm up at any size alike.
      for (const side of [0, 1] as const) for (let i = 0; i < 5; i++) await (await cases[side][name]!(REQUESTS + i)).arrayBuffer();
      for (let block = 0; block < REQUESTS / BLOCK; block++) {
        for (const side of [0, 1] as const) await sample(servers[side], cases[side][name]!, block * BLOCK, BLOCK, samples[side]);
      }
      figures[0][name] = figuresOf(samples[0]);
      figures[1][name] = figuresOf(samples[1]);
    }
    log('  reads done, walking the score list and the event feed of each set');
    Object.assign(figures[0], await walks(small, servers[0]));
    Object.assign(figures[1], await walks(large, servers[1]));
    return figures;
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
  }
}

interface Verdict {
  target: string;
  pass: boolean;
  detail: string;
}

function verdicts(small: Figures, large: Figures): Verdict[] {
  const out: Verdict[] = [];
  for (const name of ['score read', 'submission', 'v2 score', 'history', 'stamps page']) {
    const s = small[name] as LatencyFigures;
    const l = large[name] as LatencyFigures;
    for (const q of ['p50', 'p99'] as const) {
      const ratio = l[q] / s[q];
      out.push({ target: `${name} ${q} <= 1.5x small`, pass: ratio <= 1.5, detail: `${s[q]} -> ${l[q]} ms (${ratio.toFixed(2)}x)` });
    }
  }
  for (const name of ['score-list sync', 'event feed']) {
    const l = large[name] as WalkFigures;
    out.push({ target: `${name} >= 20000 rows/s`, pass: l.rowsPerSecond >= 20_000, detail: `${l.rows} rows at ${l.rowsPerSecond}/s` });
    out.push({ target: `${name} RSS flat (+-50 MB)`, pass: l.rssMaxMb - l.rssMinMb <= 50, detail: `${l.rssMinMb}-${l.rssMaxMb} MB` });
  }
  return out;
}

function describe(figures: Figures): string[] {
  return Object.entries(figures).map(([name, f]) =>
    'p50' in f
      ? `    ${name.padEnd(16)} p50 ${f.p50} ms, p99 ${f.p99} ms, server CPU ${f.cpuMsPerRequest} ms/request`
      : `    ${name.padEnd(16)} ${f.rows} rows, ${f.rowsPerSecond} rows/s, server RSS ${f.rssStartMb} MB at the start, ${f.rssMinMb}-${f.rssMaxMb} MB from page ${WARM_PAGES} on`,
  );
}

/** Measures both data sets and prints the figures and verdicts; true when every target passes. */
export async function runScaleCases(small: ScaleDataset, large: ScaleDataset, log: (line: string) => void): Promise<boolean> {
  const figures = await measure(small, large, log);
  for (const [side, dataset] of [small, large].entries()) {
    log(`${dataset.database}, size ${dataset.size} (${dataset.counts.addresses} addresses, ${dataset.counts.bounties} bounties):`);
    for (const line of describe(figures[side]!)) log(line);
  }
  const results = verdicts(figures[0], figures[1]);
  for (const v of results) log(`  ${v.pass ? 'PASS' : 'FAIL'}  ${v.target}: ${v.detail}`);
  return results.every((v) => v.pass);
}
