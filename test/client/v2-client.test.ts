/**
 * The v2 helpers of @stampgate/client against a real listening server on both databases: the
 * synchronous batch, queued batches with streamed results, and the event feed.
 */
import type { AddressInfo } from 'node:net';
import { createClient, StampgateError, type StampgateClient } from '@stampgate/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { permissionNames } from '../../src/scoring/accounts/permissions.js';
import { createTestApp, seedAccount, type TestApp } from '../helpers/app.js';
import { databaseKinds } from '../helpers/databases.js';
import { giveStamps, testWallet } from '../helpers/stamps.js';
import { fakeClock } from './helpers.js';

async function rejection(promise: Promise<unknown>): Promise<StampgateError> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(StampgateError);
  return error as StampgateError;
}

describe.each(databaseKinds)('@stampgate/client v2 helpers against a listening server on %s', (kind) => {
  let t: TestApp;
  let baseUrl: string;
  let key: string;
  let scorerId: number;
  let client: StampgateClient;
  const wallets = [701, 702, 703, 704, 705].map((seed) => testWallet(seed).address);

  beforeAll(async () => {
    t = await createTestApp(kind, { BATCH_CHUNK_SIZE: '2', BATCH_POLL_MS: '20' });
    t.ctx.worker.start();
    t.ctx.batches.worker.start();
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    const seeded = await seedAccount(t.ctx);
    key = seeded.key;
    scorerId = seeded.scorer.id;
    client = createClient({ baseUrl, apiKey: key });
    await giveStamps(t.ctx, wallets[0]!, ['Google', 'Discord']);
    await giveStamps(t.ctx, wallets[1]!, ['Google']);
    await giveStamps(t.ctx, wallets[3]!, ['Linkedin']);
  });
  afterAll(async () => t.close());

  it('scoreMany answers in input order, a repeated address twice, each as score() answers it', async () => {
    const items = await client.scoreMany(scorerId, [wallets[0]!, wallets[2]!, wallets[0]!]);
    expect(items.map((item) => item.address)).toEqual([wallets[0], wallets[2], wallets[0]]);
    expect(items[0]).toEqual(items[2]);
    for (const item of items) {
      const single = await client.score(scorerId, item.address);
      expect({ score: single.score, passing: single.passing_score, stamps: single.stamps }).toEqual({
        score: item.score,
        passing: item.passing_score,
        stamps: item.stamps,
      });
    }
    const invalid = await rejection(client.scoreMany(scorerId, [wallets[0]!, 'nope']));
    expect(invalid).toMatchObject({ status: 400, code: 'invalid_address' });
  });

  it('createBatch + batchResults: every result once, in input order, equal to the single v2 read; the batch ends DONE', async () => {
    const list = [...wallets, wallets[1]!];
    const batch = await client.createBatch(scorerId, list);
    expect(batch).toMatchObject({ status: 'PENDING', total: list.length, done: 0 });
    const results = [];
    for await (const result of client.batchResults(batch.id)) results.push(result);
    expect(results.map((r) => r.address)).toEqual(list);
    for (const result of results) {
      expect(result.error).toBeNull();
      expect(result.score).toBe((await client.score(scorerId, result.address)).score);
    }
    const finished = await client.getBatch(batch.id);
    expect(finished).toMatchObject({ id: batch.id, status: 'DONE', done: list.length, failed: 0 });
    expect((await client.cancelBatch(batch.id)).status).toBe('DONE');

    const elsewhere = createClient({ baseUrl, apiKey: (await seedAccount(t.ctx)).key });
    expect(await rejection(elsewhere.getBatch(batch.id))).toMatchObject({ status: 404 });
    const readNothing = elsewhere.batchResults(batch.id);
    expect(await rejection(readNothing.next())).toMatchObject({ status: 404 });
  });

  it('events(): the feed oldest first, resumable with after, and following new events with follow', async () => {
    // The event feed needs historical_endpoint (off by default).
    const { scorer, key: feedKey } = await seedAccount(t.ctx, { permissions: [...permissionNames] });
    const feedClient = createClient({ baseUrl, apiKey: feedKey });
    for (const address of wallets.slice(0, 3)) await feedClient.score(scorer.id, address);
    const all = [];
    for await (const event of feedClient.events(scorer.id, { pageSize: 2 })) all.push(event);
    expect(all.map((event) => event.data.address)).toEqual(wallets.slice(0, 3));
    expect(all.every((event) => event.type === 'score.updated')).toBe(true);
    const ids = all.map((event) => Number(event.event_id));
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);

    const rest = [];
    for await (const event of feedClient.events(scorer.id, { after: all[0]!.event_id })) rest.push(event.event_id);
    expect(rest).toEqual(all.slice(1).map((event) => event.event_id));

    // Caught up, the iterator waits (on the clock) and polls again: a score made meanwhile comes next.
    const clock = fakeClock();
    const following = createClient({ baseUrl, apiKey: feedKey, clock });
    const waits = clock.sleeps;
    const originalSleep = clock.sleep;
    clock.sleep = async (ms, signal) => {
      if (waits.length === 0) await feedClient.score(scorer.id, wallets[3]!);
      return originalSleep(ms, signal);
    };
    const seen = [];
    for await (const event of following.events(scorer.id, { after: all.at(-1)!.event_id, follow: true, pollIntervalMs: 1_000 })) {
      seen.push(event.data.address);
      break;
    }
    expect(seen).toEqual([wallets[3]]);
    expect(waits).toEqual([1_000]);
  });
});
