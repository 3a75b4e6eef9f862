/**
 * One load case with autocannon: a warm-up run (discarded), then the measured
 * run. Latencies are taken from every response with sub-millisecond precision
 * (autocannon's own histogram keeps whole milliseconds, too coarse here).
 *
 * Bodies are checked either on every response of the measured run (`checkDuringLoad`: writes,
 * whose answers under concurrency are the point) or on a sample sent after it, one request at a
 * time (reads): collecting and parsing every body costs the load generator more CPU than the
 * server spends answering (about 50 µs per score body, far more per 100 KB bounty list), and on
 * two shared cores that capped the read cases below what the server could serve.
 */
import { createRequire } from 'node:module';
import autocannon from 'autocannon';

/**
 * autocannon appends every response body to a string (`body += chunk`, a UTF-8 decode), whether or
 * not anything reads it. For a 100 KB list that decode is a large part of the load generator's CPU,
 * and for a gzip body (binary, the slow path of the decoder) it costs more than the server's whole
 * answer, so the load generator, not the server, set the pace. A case that reads no body during the
 * load (`checkDuringLoad` unset) has its chunks dropped; byte counts and latencies are unaffected.
 */
const pipelinedRequests = createRequire(import.meta.url)('autocannon/lib/pipelinedRequestsQueue.js') as {
  prototype: { addBody(this: unknown, chunk: Buffer): void };
};
const appendBody = pipelinedRequests.prototype.addBody;
let keepBodies = true;
pipelinedRequests.prototype.addBody = function addBody(chunk) {
  if (keepBodies) appendBody.call(this, chunk);
};

export interface LoadCase {
  url: string;
  connections: number;
  warmupSeconds: number;
  seconds: number;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  /** Requests per second offered over all connections; unset: as fast as the server answers. */
  rate?: number;
  /** Path of the n-th request (n counts over all connections). */
  path: (n: number) => string;
  body?: (n: number) => string;
  /** Null when a 2xx body is right, else a short label of what is wrong (counted per label). */
  checkBody?: (body: string) => string | null;
  /** Check every response of the measured run; otherwise `sampleChecks` requests after it (default 200). */
  checkDuringLoad?: boolean;
  sampleChecks?: number;
  /** Called between warm-up and measurement, and after measurement. */
  around?: { before(): Promise<void>; after(): Promise<void> };
}

export interface LoadResult {
  requests: number;
  durationSeconds: number;
  rps: number;
  latencyMs: { p50: number; p90: number; p99: number; max: number; mean: number };
  /** autocannon's own figures (whole milliseconds, 2xx only), for reference. */
  autocannon: { rpsAverage: number; p50: number; p99: number };
  errors: number;
  timeouts: number;
  non2xx: number;
  statusCodes: Record<string, number>;
  /** Responses with status 2xx whose body failed the case's check, by reason. */
  bodyProblems: Record<string, number>;
  /** Bodies checked: every 2xx of the measured run, or the sample sent after it. */
  bodiesChecked: number;
  warmup: { requests: number; non2xx: number; errors: number };
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] as number;
}

async function fire(spec: LoadCase, seconds: number, counter: { n: number }, onLatency: ((ms: number) => void) | null, problems: Record<string, number> | null) {
  const request: autocannon.Request = {
    method: spec.method,
    headers: spec.headers,
    setupRequest: (req) => {
      const n = counter.n++;
      req.path = spec.path(n);
      if (spec.body) req.body = spec.body(n);
      return req;
    },
  };
  keepBodies = spec.checkDuringLoad === true;
  if (spec.checkBody && spec.checkDuringLoad && problems) {
    const checkBody = spec.checkBody;
    request.onResponse = (status, body) => {
      if (status < 200 || status > 299) return;
      problems.checked = (problems.checked ?? 0) + 1;
      const problem = checkBody(body);
      if (problem !== null) problems[problem] = (problems[problem] ?? 0) + 1;
    };
  }
  const instance = autocannon({
    url: spec.url,
    connections: spec.connections,
    duration: seconds,
    timeout: 30,
    requests: [request],
    ...(spec.rate ? { overallRate: spec.rate } : {}),
  });
  if (onLatency) {
    instance.on('response', (_client: unknown, _status: number, _bytes: number, responseTime: number) => onLatency(responseTime));
  }
  return instance;
}

export async function runLoad(spec: LoadCase): Promise<LoadResult> {
  const counter = { n: 0 };
  const warm = await fire(spec, spec.warmupSeconds, counter, null, null);
  const warmup = await warm;

  let latencies = new Float64Array(1 << 16);
  let count = 0;
  const record = (ms: number) => {
    if (count === latencies.length) {
      const bigger = new Float64Array(latencies.length * 2);
      bigger.set(latencies);
      latencies = bigger;
    }
    latencies[count++] = ms;
  };
  const problems: Record<string, number> = {};
  await spec.around?.before();
  const measured = await fire(spec, spec.seconds, counter, record, problems);
  const result = await measured;
  await spec.around?.after();
  if (spec.checkBody && !spec.checkDuringLoad) await checkSample(spec, spec.checkBody, counter, problems);
  const { checked: bodiesChecked = 0, ...bodyProblems } = problems;

  const sorted = latencies.slice(0, count).sort();
  let sum = 0;
  for (const v of sorted) sum += v;
  const statusCodes = Object.fromEntries(Object.entries(result.statusCodeStats).map(([code, { count: n }]) => [code, Number(n)]));
  return {
    requests: count,
    durationSeconds: result.duration,
    rps: count / result.duration,
    latencyMs: {
      p50: percentile(sorted, 50),
      p90: percentile(sorted, 90),
      p99: percentile(sorted, 99),
      max: count > 0 ? (sorted[count - 1] as number) : Number.NaN,
      mean: count > 0 ? sum / count : Number.NaN,
    },
    autocannon: { rpsAverage: result.requests.average, p50: result.latency.p50, p99: result.latency.p99 },
    errors: result.errors,
    timeouts: result.timeouts,
    non2xx: result.non2xx,
    statusCodes,
    bodyProblems,
    bodiesChecked,
    warmup: { requests: warmup.requests.total, non2xx: warmup.non2xx, errors: warmup.errors },
  };
}

/** Sends `sampleChecks` requests of the case one at a time (continuing its numbering) and checks their bodies. */
async function checkSample(spec: LoadCase, checkBody: (body: string) => string | null, counter: { n: number }, problems: Record<string, number>): Promise<void> {
  const samples = spec.sampleChecks ?? 200;
  for (let i = 0; i < samples; i++) {
    const n = counter.n++;
    const res = await fetch(`${spec.url}${spec.path(n)}`, {
      method: spec.method,
      headers: spec.headers,
      ...(spec.body ? { body: spec.body(n) } : {}),
    });
    const body = await res.text();
    if (!res.ok) {
      problems[`status ${res.status}`] = (problems[`status ${res.status}`] ?? 0) + 1;
      continue;
    }
    problems.checked = (problems.checked ?? 0) + 1;
    const problem = checkBody(body);
    if (problem !== null) problems[problem] = (problems[problem] ?? 0) + 1;
  }
}
