/**
 * The load generator: the weighted request mix fired with autocannon at one or more API processes,
 * and the per-kind statistics (percentiles, status codes) of what came back.
 */
import autocannon from 'autocannon';
import { type Kind, type Workload, kinds, weights } from './definitions.js';

export interface KindStats {
  latencies: number[];
  statusCodes: Record<string, number>;
}

export interface KindResult {
  requests: number;
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
  ok: number;
  /** Non-2xx other than 429. */
  errors: number;
  rateLimited: number;
  statusCodes: Record<string, number>;
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] as number;
}

export function summarise(stats: KindStats, seconds: number): KindResult {
  const sorted = [...stats.latencies].sort((a, b) => a - b);
  const count = (pred: (code: number) => boolean) =>
    Object.entries(stats.statusCodes).reduce((n, [code, c]) => (pred(Number(code)) ? n + c : n), 0);
  return {
    requests: sorted.length,
    rps: sorted.length / seconds,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted.length ? (sorted[sorted.length - 1] as number) : Number.NaN,
    mean: sorted.length ? sorted.reduce((a, b) => a + b, 0) / sorted.length : Number.NaN,
    ok: count((c) => c >= 200 && c < 300),
    errors: count((c) => (c < 200 || c >= 300) && c !== 429),
    rateLimited: count((c) => c === 429),
    statusCodes: stats.statusCodes,
  };
}

function pickKind(): Kind {
  let r = Math.random();
  for (const [kind, weight] of weights) {
    if (r < weight) return kind;
    r -= weight;
  }
  return 'read';
}

/**
 * Runs the mix against every port at once (connections split evenly) for `seconds`. The kind of
 * each request is drawn in setupRequest and kept in the connection's context; onResponse (which
 * gets the context) and autocannon's `response` event (which gets the latency) fire one right
 * after the other for the same response, which pairs them.
 */
export async function fire(ports: number[], workload: Workload, seconds: number, totalConnections: number) {
  const stats = Object.fromEntries(kinds.map((k) => [k, { latencies: [] as number[], statusCodes: {} as Record<string, number> }])) as Record<Kind, KindStats>;
  let socketErrors = 0;
  let timeouts = 0;
  const firstErrors: string[] = [];
  const lastOffset = Math.max(0, workload.addresses.length - 50);
  const randomAddress = () => workload.addresses[Math.floor(Math.random() * workload.addresses.length)] as string;
  const instances = ports.map((port, i) => {
    let answered: Kind | null = null;
    const connections = Math.floor(totalConnections / ports.length) + (i < totalConnections % ports.length ? 1 : 0);
    const instance = autocannon({
      url: `http://127.0.0.1:${port}`,
      connections,
      duration: seconds,
      timeout: 30,
      requests: [
        {
          setupRequest: (request, context) => {
            const kind = pickKind();
            context.kind = kind;
            const headers: Record<string, string> = { 'x-api-key': workload.key };
            if (kind === 'submit') {
              headers['content-type'] = 'application/json';
              return { ...request, method: 'POST', path: '/registry/submit-passport', headers, body: JSON.stringify({ address: randomAddress(), scorer_id: String(workload.scorerId) }) };
            }
            const path =
              kind === 'read'
                ? `/registry/score/${workload.scorerId}/${randomAddress()}`
                : `/registry/score/${workload.scorerId}?limit=50&offset=${Math.floor(Math.random() * (lastOffset + 1))}`;
            return { ...request, method: 'GET', path, headers, body: undefined };
          },
          onResponse: (status, body, context) => {
            answered = context.kind as Kind;
            if ((status < 200 || status >= 300) && status !== 429 && firstErrors.length < 5) firstErrors.push(`${context.kind} ${status} ${body.slice(0, 200)}`);
          },
        },
      ],
    });
    instance.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
      const kind = answered ?? 'read';
      answered = null;
      stats[kind].latencies.push(ms);
      stats[kind].statusCodes[status] = (stats[kind].statusCodes[status] ?? 0) + 1;
    });
    instance.on('reqError', (error: Error) => {
      socketErrors++;
      if (firstErrors.length < 5) firstErrors.push(`socket: ${error.message}`);
    });
    instance.on('timeout', () => {
      timeouts++;
    });
    return instance;
  });
  const results = await Promise.all(instances);
  const duration = Math.max(...results.map((r) => r.duration));
  return { stats, duration, socketErrors, timeouts, firstErrors };
}
