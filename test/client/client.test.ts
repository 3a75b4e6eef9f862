/**
 * @stampgate/client against a real listening server on both databases: submitAndWait, typed errors,
 * the iterators, and the read retries (Retry-After from the server's own rate limit, and from a
 * loopback gateway that sheds load once).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient, StampgateError, type StampgateClient } from '@stampgate/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, seedAccount, type TestApp } from '../helpers/app.js';
import { databaseKinds } from '../helpers/databases.js';
import { giveStamps, testWallet } from '../helpers/stamps.js';
import { bountyFixtures, importOk } from '../publicdata/fixtures.js';
import { fakeClock, recordingFetch } from './helpers.js';
import { systemClock } from '../../packages/client/src/transport.js';

async function listen(t: TestApp): Promise<string> {
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  return `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
}

async function rejection(promise: Promise<unknown>): Promise<StampgateError> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(StampgateError);
  return error as StampgateError;
}

describe.each(databaseKinds)('@stampgate/client against a listening server on %s', (kind) => {
  let t: TestApp;
  let baseUrl: string;
  let key: string;
  let scorerId: number;
  let client: StampgateClient;

  beforeAll(async () => {
    // The submission answers PROCESSING at once, so submitAndWait has to poll.
    t = await createTestApp(kind, { SUBMIT_WAIT_MS: '0' });
    baseUrl = await listen(t);
    const seeded = await seedAccount(t.ctx);
    key = seeded.key;
    scorerId = seeded.scorer.id;
    client = createClient({ baseUrl, apiKey: key });
  });
  afterAll(async () => t.close());

  it('submitAndWait gives up at its deadline with deadline_exceeded, having submitted once and polled with growing pauses', async () => {
    const wallet = testWallet(201);
    await giveStamps(t.ctx, wallet.address, ['Google']);
    const clock = fakeClock();
    const recorder = recordingFetch();
    const waiting = createClient({ baseUrl, apiKey: key, clock, fetch: recorder.fetch });
    // No worker runs: the score stays PROCESSING.
    const error = await rejection(waiting.submitAndWait(scorerId, wallet.address, { timeoutMs: 10_000, intervalMs: 500, maxIntervalMs: 2_000 }));
    expect(error.code).toBe('deadline_exceeded');
    expect(error.status).toBe(0);
    expect(recorder.requests.filter((r) => r.method === 'POST')).toHaveLength(1);
    expect(clock.sleeps).toEqual([500, 750, 1125, 1688, 2000, 2000, 1937]);
    expect(clock.sleeps.reduce((a, b) => a + b, 0)).toBe(10_000);
    expect(recorder.requests.filter((r) => r.method === 'GET')).toHaveLength(clock.sleeps.length - 1);
  });

  it('an AbortSignal stops submitAndWait during its wait, with code aborted', async () => {
    const wallet = testWallet(204);
    await giveStamps(t.ctx, wallet.address, ['Google']);
    const controller = new AbortController();
    // The caller gives up while the client waits between polls.
    const clock = { now: () => Date.now(), sleep: (ms: number, signal?: AbortSignal) => (controller.abort(), systemClock.sleep(ms, signal)) };
    const waiting = createClient({ baseUrl, apiKey: key, clock });
    const error = await rejection(waiting.submitAndWait(scorerId, wallet.address, { signal: controller.signal, intervalMs: 60_000 }));
    expect(error).toMatchObject({ code: 'aborted', status: 0 });
  });

  it('submitAndWait submits once and polls until DONE: the record with its score and stamp_scores', async () => {
    t.ctx.worker.start();
    const wallet = testWallet(202);
    await giveStamps(t.ctx, wallet.address, ['Google', 'Discord']);
    const recorder = recordingFetch();
    const polling = createClient({ baseUrl, apiKey: key, fetch: recorder.fetch });
    const record = await polling.submitAndWait(scorerId, wallet.address, { intervalMs: 20, timeoutMs: 15_000 });
    expect(record.status).toBe('DONE');
    expect(record.address).toBe(wallet.address);
    expect(record.score).toMatch(/^\d+\.\d{5}$/);
    expect(Object.keys(record.stamp_scores ?? {}).sort()).toEqual(['Discord', 'Google']);
    expect(recorder.requests.filter((r) => r.method === 'POST')).toHaveLength(1);
    expect(recorder.requests[0]).toMatchObject({ method: 'POST', path: '/registry/submit-passport', status: 200 });
  });

  it('score() scores now without a submission (v1 reads then see it); scoreAt() reads the history', async () => {
    const { account, scorer } = await seedAccount(t.ctx);
    const { key: historyKey } = await t.ctx.apiKeys.create(account.id, { permissions: ['read_scores', 'submit_passports', 'historical_endpoint'] });
    const v2 = createClient({ baseUrl, apiKey: historyKey });
    const wallet = testWallet(210);
    await giveStamps(t.ctx, wallet.address, ['Google', 'Discord']);
    const before = new Date(Date.now() - 60_000);

    const result = await v2.score(scorer.id, wallet.address);
    expect(result.address).toBe(wallet.address);
    expect(result.score).toMatch(/^\d+\.\d{5}$/);
    expect(result.threshold).toMatch(/^\d+\.\d{5}$/);
    expect(result.passing_score).toBe(Number(result.score) >= Number(result.threshold));
    expect(Object.keys(result.stamps).sort()).toEqual(['Discord', 'Google']);
    expect(result.error).toBeNull();
    expect(result.points_data).toBeNull();
    const v1 = await v2.getScore(scorer.id, wallet.address);
    expect(v1).toMatchObject({ status: 'DONE', score: result.score });

    const now = await v2.scoreAt(scorer.id, wallet.address, new Date(Date.now() + 1_000));
    expect(now).toMatchObject({ address: wallet.address, score: result.score, passing_score: result.passing_score });
    const tooEarly = await rejection(v2.scoreAt(scorer.id, wallet.address, before));
    expect(tooEarly).toMatchObject({ status: 404, code: 'score_not_found', body: { address: wallet.address } });
    // Without historical_endpoint (off by default) the history is refused; score() still works.
    const refused = await rejection(createClient({ baseUrl, apiKey: key }).scoreAt(scorerId, wallet.address, new Date()));
    expect(refused.status).toBe(403);
  });

  it('errors are StampgateError with the server’s code, status and detail', async () => {
    const notSubmitted = await rejection(client.getScore(scorerId, testWallet(203).address));
    expect(notSubmitted).toMatchObject({ code: 'not_submitted', status: 404 });
    expect(notSubmitted.detail.length).toBeGreaterThan(0);
    expect(notSubmitted.requestId).toBeTruthy();

    const badAddress = await rejection(client.submitPassport(scorerId, '0x1234'));
    expect(badAddress).toMatchObject({ code: 'invalid_address', status: 400 });

    const badKey = await rejection(createClient({ baseUrl, apiKey: 'not-a-key' }).getScore(scorerId, testWallet(203).address));
    expect(badKey.status).toBe(401);
    expect(badKey.code).toMatch(/^[a-z_]+$/);
  });

  it('a closed port is network_error (status 0) after the read retries, waiting a capped backoff each time', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const clock = fakeClock();
    const offline = createClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: key, clock, retry: { maxRetries: 2, baseDelayMs: 100 } });
    const error = await rejection(offline.getScore(scorerId, testWallet(203).address));
    expect(error).toMatchObject({ code: 'network_error', status: 0 });
    expect(clock.sleeps).toHaveLength(2);
    expect(clock.sleeps[0]).toBeLessThanOrEqual(100);
    expect(clock.sleeps[1]).toBeLessThanOrEqual(200);
  });

  it('scores() pages through the list in order and, when a record is re-scored mid-way, skips none', async () => {
    const { scorer: list, key: listKey } = await seedAccount(t.ctx);
    const lister = createClient({ baseUrl, apiKey: listKey });
    const wallets = [301, 302, 303, 304, 305].map((seed) => testWallet(seed));
    for (const wallet of wallets) {
      await giveStamps(t.ctx, wallet.address, ['Google']);
      expect((await lister.submitAndWait(list.id, wallet.address, { intervalMs: 20, timeoutMs: 15_000 })).status).toBe('DONE');
    }
    const seen: string[] = [];
    for await (const record of lister.scores(list.id, {}, { pageSize: 2 })) {
      seen.push(record.address);
      // After the first page, the first record is scored again: it moves to the end of the list.
      if (seen.length === 2) expect((await lister.submitAndWait(list.id, wallets[0]!.address, { intervalMs: 20 })).status).toBe('DONE');
    }
    expect(new Set(seen)).toEqual(new Set(wallets.map((w) => w.address)));
    expect(seen.slice(0, 5)).toEqual(wallets.map((w) => w.address));
    expect(seen.at(-1)).toBe(wallets[0]!.address);

    const only = [];
    for await (const record of lister.scores(list.id, { address: wallets[2]!.address })) only.push(record.address);
    expect(only).toEqual([wallets[2]!.address]);
  });

  it('stamps() follows the next tokens until every stamp is read', async () => {
    const wallet = testWallet(401);
    const providers = ['Google', 'Discord', 'Linkedin', 'Github', 'Ens'];
    await giveStamps(t.ctx, wallet.address, providers);
    const read: string[] = [];
    for await (const stamp of client.stamps(wallet.address, { pageSize: 2, includeMetadata: true })) {
      read.push(String((stamp.credential as { credentialSubject?: { provider?: string } }).credentialSubject?.provider));
      expect(stamp.metadata === null || typeof stamp.metadata?.name === 'string').toBe(true);
    }
    expect(read.sort()).toEqual([...providers].sort());
  });

  it('bounties() pages by pk__gt in id order, or follows Link for another order, with filters applied', async () => {
    await importOk(t.ctx, { bounties: bountyFixtures() });
    const recorder = recordingFetch();
    const reader = createClient({ baseUrl, fetch: recorder.fetch });
    const byId = [];
    for await (const bounty of reader.bounties({}, { pageSize: 2 })) byId.push(bounty.pk);
    expect(byId).toEqual([1, 2, 3, 4, 5, 6]);
    expect(recorder.requests.every((r) => r.path === '/api/v0.1/bounties/' && r.status === 200)).toBe(true);

    const newestFirst = [];
    for await (const bounty of reader.bounties({ order_by: '-pk' }, { pageSize: 4 })) newestFirst.push(bounty.pk);
    expect(newestFirst).toEqual([6, 5, 4, 3, 2, 1]);

    const open = [];
    for await (const bounty of reader.bounties({ idx_status: 'open' })) open.push(bounty.pk);
    expect(open).toEqual([1, 6]);
  });
});

describe.each(databaseKinds)('@stampgate/client read retries on %s', (kind) => {
  let t: TestApp;
  let baseUrl: string;
  let gateway: Server;
  let gatewayUrl: string;
  const shed = new Set<string>();
  const gatewaySaw: string[] = [];

  beforeAll(async () => {
    t = await createTestApp(kind, { PUBLIC_RATE_LIMIT_PER_MINUTE: '1', SUBMIT_WAIT_MS: '20000' });
    t.ctx.worker.start();
    baseUrl = await listen(t);
    // A load balancer in front of the service that sheds the first request of each method with 503 and Retry-After.
    gateway = createServer(async (request, response) => {
      gatewaySaw.push(request.method!);
      if (!shed.has(request.method!)) {
        shed.add(request.method!);
        response.writeHead(503, { 'content-type': 'application/json', 'retry-after': '2' });
        response.end(JSON.stringify({ detail: 'Shedding load', code: 'service_unavailable' }));
        return;
      }
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      const upstream = await fetch(`${baseUrl}${request.url}`, {
        method: request.method,
        headers: Object.fromEntries(Object.entries(request.headers).filter(([name]) => name !== 'host' && name !== 'content-length')) as Record<string, string>,
        body: chunks.length > 0 ? Buffer.concat(chunks) : undefined,
      });
      response.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/json' });
      response.end(Buffer.from(await upstream.arrayBuffer()));
    });
    await new Promise<void>((resolve) => gateway.listen(0, '127.0.0.1', resolve));
    gatewayUrl = `http://127.0.0.1:${(gateway.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => gateway.close(resolve));
    await t.close();
  });

  it('honours the server’s Retry-After on a 429 read, then throws rate_limited with retryAfterMs after the last retry', async () => {
    const clock = fakeClock();
    const recorder = recordingFetch();
    const reader = createClient({ baseUrl, clock, fetch: recorder.fetch, retry: { maxRetries: 2, maxRetryAfterMs: 120_000 } });
    const pages = reader.bounties();
    await pages.next(); // spends the one request of this minute
    const error = await rejection(reader.bounties().next());
    expect(error).toMatchObject({ code: 'rate_limited', status: 429 });
    expect(error.retryAfterMs).toBeGreaterThan(0);
    const limited = recorder.requests.filter((r) => r.status === 429);
    expect(limited).toHaveLength(3);
    expect(clock.sleeps).toEqual(limited.slice(0, 2).map((r) => Number(r.retryAfter) * 1000));
  });

  it('does not wait out a Retry-After longer than maxRetryAfterMs: the error comes at once', async () => {
    const clock = fakeClock();
    const reader = createClient({ baseUrl, clock, retry: { maxRetryAfterMs: 500 } });
    const error = await rejection(reader.bounties().next());
    expect(error.status).toBe(429);
    expect(error.retryAfterMs).toBeGreaterThan(500);
    expect(clock.sleeps).toEqual([]);
  });

  it('a read shed with 503 + Retry-After is retried after that wait and succeeds; a write is never retried', async () => {
    const { scorer, key } = await seedAccount(t.ctx);
    const wallet = testWallet(501);
    await giveStamps(t.ctx, wallet.address, ['Google']);
    const clock = fakeClock();
    const viaGateway = createClient({ baseUrl: gatewayUrl, apiKey: key, clock });

    const refused = await rejection(viaGateway.submitPassport(scorer.id, wallet.address));
    expect(refused).toMatchObject({ status: 503, code: 'service_unavailable', retryAfterMs: 2000 });
    expect(gatewaySaw.filter((m) => m === 'POST')).toHaveLength(1);

    await createClient({ baseUrl, apiKey: key }).submitPassport(scorer.id, wallet.address);
    const record = await viaGateway.getScore(scorer.id, wallet.address);
    expect(record.status).toBe('DONE');
    expect(clock.sleeps).toEqual([2000]);
    expect(gatewaySaw.filter((m) => m === 'GET')).toHaveLength(2);
  });
});
