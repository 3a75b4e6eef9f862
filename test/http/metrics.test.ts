import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, seedAccount, type TestApp } from '../helpers/app.js';
import { databaseKinds } from '../helpers/databases.js';
import { giveStamps } from '../helpers/stamps.js';
import { buildWorkerServer } from '../../src/app/worker-server.js';

function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) return Number(line.split(' ').pop());
  }
  return undefined;
}

describe.each(databaseKinds)('GET /metrics on %s', (kind) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp(kind, { SUBMIT_WAIT_MS: '20000' });
  });
  afterEach(async () => t.close());

  it('counts requests and latency by route and status, scoring jobs, cache hits and queue depth', async () => {
    const { key, scorer } = await seedAccount(t.ctx);
    t.ctx.worker.start();
    const address = '0x' + '77'.repeat(20);
    const credentials = await giveStamps(t.ctx, address, ['Google']);
    // The same credential again: its proof result comes from the cache.
    expect((await t.ctx.stamps.importCredentials(credentials)).unchanged).toBe(1);
    await t.app.inject({ method: 'POST', url: '/registry/submit-passport', headers: { 'x-api-key': key }, payload: { address, scorer_id: String(scorer.id) } });
    await t.app.inject({ url: `/registry/score/${scorer.id}/${address}`, headers: { 'x-api-key': key } });
    await t.app.inject({ url: `/registry/score/${scorer.id}/0x12`, headers: { 'x-api-key': key } });
    await t.app.inject({ url: '/no/such/path' });

    const res = await t.app.inject('/metrics');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/plain');
    const text = res.body;
    expect(sample(text, 'stampgate_http_requests_total', { route: '/registry/score/:scorer_id/:address', status: '200' })).toBe(1);
    expect(sample(text, 'stampgate_http_requests_total', { route: '/registry/score/:scorer_id/:address', status: '400' })).toBe(1);
    expect(sample(text, 'stampgate_http_requests_total', { route: 'unmatched', status: '404' })).toBe(1);
    expect(sample(text, 'stampgate_http_request_duration_seconds_count', { route: '/registry/submit-passport', status: '200' })).toBe(1);
    expect(sample(text, 'stampgate_scoring_jobs_total', { outcome: 'done' })).toBe(1);
    expect(sample(text, 'stampgate_scoring_job_duration_seconds_count', { outcome: 'done' })).toBe(1);
    expect(sample(text, 'stampgate_scoring_queue_depth')).toBe(0);
    expect(sample(text, 'stampgate_credential_verifications_total', { result: 'miss' })).toBe(1);
    expect(sample(text, 'stampgate_credential_verifications_total', { result: 'hit' })).toBe(1);
  });

  it('counts rate-limit rejections by tier', async () => {
    const { key } = await seedAccount(t.ctx, { tier: 1 });
    for (let i = 0; i < 127; i++) await t.app.inject({ url: '/registry/stamp-metadata', headers: { 'x-api-key': key } });
    const text = (await t.app.inject('/metrics')).body;
    expect(sample(text, 'stampgate_rate_limit_rejections_total', { tier: '1' })).toBe(2);
    expect(sample(text, 'stampgate_http_requests_total', { route: '/registry/stamp-metadata', status: '429' })).toBe(2);
  });

  it('shares one budget across every scoring route', async () => {
    const { key } = await seedAccount(t.ctx, { tier: 1 });
    for (let i = 0; i < 100; i++) await t.app.inject({ url: '/registry/stamp-metadata', headers: { 'x-api-key': key } });
    const signing = await t.app.inject({ url: '/registry/signing-message', headers: { 'x-api-key': key } });
    expect(signing.headers['ratelimit-remaining']).toBe('24');
  });
});

describe('metrics off', () => {
  it('serves no /metrics when METRICS_ENABLED=false', async () => {
    const t = await createTestApp('sqlite', { METRICS_ENABLED: 'false' });
    expect((await t.app.inject('/metrics')).statusCode).toBe(404);
    await t.close();
  });
});

describe.each(databaseKinds)('a worker’s own /metrics and health checks on %s', (kind) => {
  it('reports the jobs this worker settled, which an API process cannot see', async () => {
    const t = await createTestApp(kind, { SUBMIT_WAIT_MS: '20000' });
    const monitoring = await buildWorkerServer(t.ctx);
    try {
      const { scorer } = await seedAccount(t.ctx);
      const address = '0x' + '78'.repeat(20);
      await giveStamps(t.ctx, address, ['Google']);
      t.ctx.worker.start();
      await t.ctx.scores.submit(scorer.id, address);
      const text = (await monitoring.inject('/metrics')).body;
      expect(sample(text, 'stampgate_scoring_jobs_total', { outcome: 'done' })).toBe(1);
      expect(sample(text, 'stampgate_scoring_queue_depth')).toBe(0);
      expect((await monitoring.inject('/health/ready')).statusCode).toBe(200);
      // Only monitoring: no API route is served here.
      expect((await monitoring.inject('/registry/stamp-metadata')).json()).toMatchObject({ code: 'not_found' });
    } finally {
      await monitoring.close();
      await t.close();
    }
  });
});
