/**
 * The load test's second window: the same mix again while an asynchronous batch of
 * LOADTEST_BATCH_ADDRESSES fresh addresses (100,000 by default; 0 skips the window) is being scored
 * by the same processes. Batches run at a lower priority than submissions, so the mix's latency
 * should stay where it was; the batch's own progress in the window is reported beside it.
 */
import { randomBytes } from 'node:crypto';

export interface BatchWindow<L> {
  load: L;
  batchAddresses: number;
  /** Batch addresses scored during the measured window. */
  scoredInWindow: number;
  batchStatusAfter: string;
}

async function call(port: number, method: string, path: string, key: string, body?: string) {
  const response = await fetch(`http://127.0.0.1:${port}${path}`, {
    method,
    headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body,
  });
  return { status: response.status, body: (await response.json()) as { id?: string; status?: string; done?: number; failed?: number } };
}

/** Queues the batch, waits until a worker has started on it, runs `measure`, then cancels what is left. */
export async function whileBatchRuns<L>(port: number, scorerId: number, key: string, count: number, measure: () => Promise<L>): Promise<BatchWindow<L>> {
  const body = JSON.stringify({ addresses: Array.from({ length: count }, () => `0x${randomBytes(20).toString('hex')}`) });
  const created = await call(port, 'POST', `/v2/scorers/${scorerId}/batches`, key, body);
  if (created.status !== 202 || !created.body.id) throw new Error(`queueing the batch: HTTP ${created.status} ${JSON.stringify(created.body)}`);
  const id = created.body.id;
  const view = async () => (await call(port, 'GET', `/v2/batches/${id}`, key)).body;
  const deadline = Date.now() + 60_000;
  while ((await view()).done === 0) {
    if (Date.now() > deadline) throw new Error('the batch did not start within 60 s');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const before = await view();
  const load = await measure();
  const after = await view();
  await call(port, 'DELETE', `/v2/batches/${id}`, key);
  return {
    load,
    batchAddresses: count,
    scoredInWindow: (after.done ?? 0) + (after.failed ?? 0) - (before.done ?? 0) - (before.failed ?? 0),
    batchStatusAfter: after.status ?? 'unknown',
  };
}

interface Latency {
  p50: number;
  p99: number;
}

/** One line comparing each route kind's latency without and with the batch running. */
export function batchWindowLine<K extends string>(
  name: string,
  before: Record<K, Latency>,
  window: BatchWindow<{ seconds: number; kinds: Record<K, Latency> }>,
  labels: Record<K, string>,
): string {
  const kinds = Object.keys(labels) as K[];
  const rate = Math.round(window.scoredInWindow / window.load.seconds);
  return (
    `${name}: while a ${window.batchAddresses}-address batch was scored (${window.scoredInWindow} addresses in the window, ${rate}/s): ` +
    kinds
      .map((k) => `${labels[k]} p50 ${before[k].p50.toFixed(2)} → ${window.load.kinds[k].p50.toFixed(2)} ms, p99 ${before[k].p99.toFixed(2)} → ${window.load.kinds[k].p99.toFixed(2)} ms`)
      .join('; ')
  );
}
