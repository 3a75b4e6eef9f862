/**
 * Integrator clients of the reference scoring service, run against a real listening server with
 * `fetch`: the request shapes and the reads of the reference service's public examples (score
 * gating, airdrop), of a polling client and of integrator code that iterates `stamp_scores`. Each
 * client is written here from that public behaviour; none of their code is copied. What they rely
 * on: the single read answers the record at the top level, `stamp_scores` is an object once DONE,
 * `"signature": ""`/`"nonce": ""` mean unsigned, the per-round staking route needs no key, and
 * every icon URL can be loaded as it is.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StakeEvent } from '../../src/chain/staking-contract.js';
import { createTestApp, seedAccount, type TestApp } from '../helpers/app.js';
import { databaseKinds } from '../helpers/databases.js';
import { giveStamps, testWallet } from '../helpers/stamps.js';

type Json = Record<string, any>;

/** What the examples' server-side proxies do: one call with the key in X-API-KEY, body parsed as JSON. */
function scorerApi(base: string, apiKey: string) {
  const headers = { 'X-API-KEY': apiKey, Accept: 'application/json', 'Content-Type': 'application/json' };
  return {
    async signingMessage(): Promise<Json> {
      return (await (await fetch(`${base}/registry/signing-message`, { headers })).json()) as Json;
    },
    async submit(body: Json): Promise<{ status: number; data: Json }> {
      const res = await fetch(`${base}/registry/submit-passport`, { method: 'POST', headers, body: JSON.stringify(body) });
      return { status: res.status, data: (await res.json()) as Json };
    },
    async score(scorerId: string, address: string): Promise<{ status: number; data: Json }> {
      const res = await fetch(`${base}/registry/score/${scorerId}/${address}`, { headers });
      return { status: res.status, data: (await res.json()) as Json };
    },
    async scores(scorerId: string, query = ''): Promise<Json> {
      return (await (await fetch(`${base}/registry/score/${scorerId}${query}`, { headers })).json()) as Json;
    },
  };
}

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each(databaseKinds)('reference integrator clients against a listening server on %s', (kind) => {
  let t: TestApp;
  let base: string;
  let api: ReturnType<typeof scorerApi>;
  let scorerId: string;

  beforeAll(async () => {
    // A generous wait budget so the submissions answer DONE on a loaded machine; the polling client sets its own.
    t = await createTestApp(kind, { SUBMIT_WAIT_MS: '20000' });
    t.ctx.worker.start();
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    const seeded = await seedAccount(t.ctx);
    api = scorerApi(base, seeded.key);
    scorerId = String(seeded.scorer.id);
  });
  afterAll(async () => t.close());

  it('score gating: signs the signing message, submits with `community`, reads data.status and data.score at the top level', async () => {
    // The gate lets a user in when the score read reaches the example's threshold of 1 (a string compared to a number).
    async function gate(wallet: ReturnType<typeof testWallet>): Promise<'dashboard' | 'denied' | 'error'> {
      const { message, nonce } = await api.signingMessage();
      const signature = await wallet.account.signMessage({ message });
      await api.submit({ address: wallet.account.address, community: scorerId, signature, nonce });
      const { data } = await api.score(scorerId, wallet.account.address);
      if (data.status === 'ERROR') return 'error';
      return data.score >= 1 ? 'dashboard' : 'denied';
    }
    const human = testWallet(101);
    const newcomer = testWallet(102);
    await giveStamps(t.ctx, human.address, ['Google', 'Discord', 'Linkedin']);
    await giveStamps(t.ctx, newcomer.address, ['Google']);
    expect(await gate(human)).toBe('dashboard');
    expect(await gate(newcomer)).toBe('denied');
  });

  it('airdrop: submits {"address","scorer_id","signature":"","nonce":""}, reads the score and inserts the addresses that pass', async () => {
    const airdropList: { address: string; score: string }[] = [];
    async function addToAirdrop(address: string) {
      const submitted = await api.submit({ address, scorer_id: scorerId, signature: '', nonce: '' });
      expect(submitted.status).toBe(200);
      const { data } = await api.score(scorerId, address);
      if (data.status === 'ERROR') return;
      if (data.score > 1) airdropList.push({ address, score: data.score });
    }
    const eligible = testWallet(201).address;
    const ineligible = testWallet(202).address;
    await giveStamps(t.ctx, eligible, ['Linkedin', 'Discord']);
    await giveStamps(t.ctx, ineligible, ['Ens']);
    await addToAirdrop(eligible);
    await addToAirdrop(ineligible);
    expect(airdropList).toEqual([{ address: eligible, score: '2.04700' }]);
  });

  it('integrator code: Object.entries(data.stamp_scores) on the submission, the single read and the list', async () => {
    const address = testWallet(301).address;
    await giveStamps(t.ctx, address, ['Google', 'Linkedin']);
    const submitted = (await api.submit({ address, scorer_id: scorerId })).data;
    const read = (await api.score(scorerId, address)).data;
    const listed = (await api.scores(scorerId, `?address=${address}&limit=`)).items[0];
    for (const data of [submitted, read, listed]) {
      const entries = Object.entries(data.stamp_scores as Record<string, string>);
      expect(entries).toEqual([
        ['Google', '0.52500'],
        ['Linkedin', '1.53100'],
      ]);
      // Integrators add the per-stamp scores up (here exactly) and find the score.
      const units = entries.reduce((sum, [, weight]) => sum + BigInt(weight.replace('.', '')), 0n).toString().padStart(6, '0');
      expect(`${units.slice(0, -5)}.${units.slice(-5)}`).toBe(data.score);
      expect(Date.parse(data.expiration_date)).toBeGreaterThan(Date.now());
    }
    // An address that earned nothing still gives an object to iterate.
    const empty = testWallet(302).address;
    const none = (await api.submit({ address: empty, scorer_id: scorerId, signature: '', nonce: '' })).data;
    expect(Object.entries(none.stamp_scores)).toEqual([]);
    expect(Object.entries((await api.score(scorerId, empty)).data.stamp_scores)).toEqual([]);
  });

  it('per-round staking events: no key, {"results":[…]} read with the fields of the reference service', async () => {
    const staker = testWallet(401).address;
    const events: StakeEvent[] = [
      { type: 'selfStake', roundId: 3n, staker, user: null, amount: 10n ** 18n, staked: true, txHash: `0x${'e1'.repeat(32)}`, logIndex: 0, blockNumber: 50 },
      { type: 'xStake', roundId: 3n, staker: testWallet(402).address, user: staker, amount: 5n, staked: true, txHash: `0x${'e2'.repeat(32)}`, logIndex: 4, blockNumber: 51 },
    ];
    await t.ctx.staking.events.storeImported(events, Date.now());
    const res = await fetch(`${base}/registry/gtc-stake/${staker}/3`);
    expect(res.status).toBe(200);
    expect(res.headers.get('ratelimit-limit')).toBe('600');
    const { results } = (await res.json()) as { results: Json[] };
    const selfTotal = results.filter((e) => e.event_type === 'SelfStake' && e.staked).reduce((sum, e) => sum + BigInt(e.amount), 0n);
    expect(selfTotal).toBe(10n ** 18n);
    expect(results.map((e) => [e.event_type, e.staker, e.address, e.round_id, e.block_number])).toEqual([
      ['SelfStake', staker, staker, 3, 50],
      ['Xstake', testWallet(402).address, staker, 3, 51],
    ]);
    expect((await (await fetch(`${base}/registry/gtc-stake/${staker}/4`)).json())).toEqual({ results: [] });
  });

  it('a wallet renders every catalogue icon as <img src>: each URL loads as an image from this server', async () => {
    const platforms = (await (await fetch(`${base}/registry/stamp-metadata`, { headers: { 'X-API-KEY': (await seedAccount(t.ctx)).key } })).json()) as Json[];
    const icons = [...new Set(platforms.map((p) => p.icon as string))];
    expect(icons.length).toBeGreaterThan(20);
    for (const icon of icons) {
      expect(icon.startsWith(`${base}/static/icons/`)).toBe(true);
      const res = await fetch(icon);
      expect(res.status, icon).toBe(200);
      expect(res.headers.get('content-type')).toBe('image/svg+xml');
      expect(await res.text()).toMatch(/^<svg /);
    }
  });
});

describe.each(databaseKinds)('a polling client against a listening server on %s', (kind) => {
  let t: TestApp;
  let base: string;

  beforeAll(async () => {
    // No wait at all: every submission answers PROCESSING and the client has to poll.
    t = await createTestApp(kind, { SUBMIT_WAIT_MS: '0' });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => t.close());

  it('loops on GET score until status == "DONE", reading the top-level fields', async () => {
    const seeded = await seedAccount(t.ctx);
    const api = scorerApi(base, seeded.key);
    const address = testWallet(501).address;
    await giveStamps(t.ctx, address, ['Google', 'Discord']);

    const submitted = await api.submit({ address, scorer_id: String(seeded.scorer.id) });
    expect(submitted.data).toMatchObject({ status: 'PROCESSING', score: null, stamp_scores: null, expiration_date: null });
    // The scoring starts only now, so the first reads surely see PROCESSING at the top level.
    const first = (await api.score(String(seeded.scorer.id), address)).data;
    expect(first).toMatchObject({ status: 'PROCESSING', score: null, stamp_scores: null });
    t.ctx.worker.start();

    let data: Json = first;
    let polls = 1;
    // The client's own bound: give up after a generous time rather than spin forever.
    const deadline = Date.now() + 30_000;
    while (data.status !== 'DONE' && Date.now() < deadline) {
      await wait(50);
      data = (await api.score(String(seeded.scorer.id), address)).data;
      polls += 1;
    }
    expect(data.status).toBe('DONE');
    expect(polls).toBeGreaterThan(1);
    expect(data.score).toBe('1.04100');
    expect(data.error).toBeNull();
    expect(data.stamp_scores).toEqual({ Discord: '0.51600', Google: '0.52500' });
    // The same record a list client finds in items[0].
    const { items, count, ...record } = data;
    expect(items).toEqual([record]);
    expect(count).toBe(1);
  });
});
