import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, seedAccount, type TestApp } from '../../helpers/app.js';
import { databaseKinds } from '../../helpers/databases.js';
import { waitFor } from '../../helpers/processes.js';

const addressNo = (n: number) => '0x' + n.toString(16).padStart(40, '0');

// A stream of a pending batch polls the database until the batch ends or goes quiet: one account
// may hold only BATCH_RESULT_STREAMS_PER_ACCOUNT of them open at once.
describe.each(databaseKinds)('open batch result streams per account on %s', (kind) => {
  let t: TestApp;
  let base: string;
  const streams: AbortController[] = [];

  beforeEach(async () => {
    // No batch worker runs: the batch stays pending and every stream stays open, waiting.
    t = await createTestApp(kind, { BATCH_RESULT_STREAMS_PER_ACCOUNT: '2', BATCH_RESULTS_WAIT_MS: '600000', BATCH_POLL_MS: '20' });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  });
  afterEach(async () => {
    for (const stream of streams.splice(0)) stream.abort();
    await t.close();
  });

  async function pendingBatch() {
    const seeded = await seedAccount(t.ctx);
    const created = await t.app.inject({
      method: 'POST',
      url: `/v2/scorers/${seeded.scorer.id}/batches`,
      headers: { 'x-api-key': seeded.key },
      payload: { addresses: [addressNo(1), addressNo(2)] },
    });
    expect(created.statusCode, created.body).toBe(202);
    return { ...seeded, url: `${base}/v2/batches/${created.json().id}/results` };
  }

  /** Opens a result stream and returns its answer once the headers arrived (the body keeps waiting). */
  async function open(url: string, key: string): Promise<Response> {
    const stream = new AbortController();
    streams.push(stream);
    // CSV: its header line is sent at once, so the answer's headers arrive while the stream waits.
    return fetch(url, { headers: { 'x-api-key': key, accept: 'text/csv' }, signal: stream.signal });
  }

  it('refuses a third stream of the account with 429 and the standard body, not another account\'s, and frees a slot when a stream closes', async () => {
    const batch = await pendingBatch();
    expect((await open(batch.url, batch.key)).status).toBe(200);
    expect((await open(batch.url, batch.key)).status).toBe(200);
    expect(t.ctx.batches.resultStreams.openOf(batch.account.id)).toBe(2);

    const refused = await open(batch.url, batch.key);
    expect(refused.status).toBe(429);
    expect(await refused.json()).toEqual({ detail: expect.stringContaining('BATCH_RESULT_STREAMS_PER_ACCOUNT=2'), code: 'too_many_result_streams' });
    expect(t.ctx.batches.resultStreams.openOf(batch.account.id)).toBe(2);

    const other = await pendingBatch();
    expect((await open(other.url, other.key)).status).toBe(200);

    // The client of the first stream goes away: its slot is given back.
    streams[0]!.abort();
    await waitFor('the closed stream\'s slot', 10_000, async () => t.ctx.batches.resultStreams.openOf(batch.account.id) === 1, 10);
    expect((await open(batch.url, batch.key)).status).toBe(200);
  });

  it('gives the slot back when the request is refused after taking it (unknown batch)', async () => {
    const batch = await pendingBatch();
    for (let i = 0; i < 3; i++) {
      const missing = await open(`${base}/v2/batches/bat_unknownunknown00/results`, batch.key);
      expect(missing.status).toBe(404);
    }
    expect(t.ctx.batches.resultStreams.openOf(batch.account.id)).toBe(0);
  });
});
