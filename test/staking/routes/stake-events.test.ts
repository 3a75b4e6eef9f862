import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { StakeEvent } from '../../../src/chain/staking-contract.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { databaseKinds } from '../../helpers/databases.js';

const alice = '0x' + 'a1'.repeat(20);
const bob = '0x' + 'b0'.repeat(20);
const carol = '0x' + 'c0'.repeat(20);
const BIG = 2n ** 70n + 1n; // beyond 2^53: must come back digit for digit
const tx = (n: number) => '0x' + n.toString(16).padStart(64, '0');

function event(e: Partial<StakeEvent> & Pick<StakeEvent, 'type' | 'roundId' | 'staker' | 'blockNumber' | 'logIndex'>): StakeEvent {
  return { user: null, amount: 1n, staked: true, txHash: tx(e.blockNumber * 100 + e.logIndex), ...e };
}

// Stored out of chain order on purpose: the route answers oldest first whatever the arrival order.
const events: StakeEvent[] = [
  event({ type: 'xStake', roundId: 2n, staker: bob, user: alice, amount: 9n, blockNumber: 30, logIndex: 0 }),
  event({ type: 'selfStake', roundId: 1n, staker: alice, amount: BIG, blockNumber: 10, logIndex: 1 }),
  event({ type: 'xStake', roundId: 1n, staker: bob, user: alice, amount: 5n, blockNumber: 12, logIndex: 0 }),
  event({ type: 'selfStake', roundId: 1n, staker: alice, amount: 3n, staked: false, blockNumber: 12, logIndex: 3 }),
  event({ type: 'xStake', roundId: 1n, staker: alice, user: carol, amount: 7n, blockNumber: 11, logIndex: 0 }),
  event({ type: 'selfStake', roundId: 1n, staker: bob, amount: 100n, blockNumber: 9, logIndex: 0 }),
];

describe.each(databaseKinds)('GET /registry/{token}-stake/{address}/{round_id} on %s', (kind) => {
  let t: TestApp;

  beforeEach(async () => {
    t = await createTestApp(kind, { STAKE_EVENTS_RATE_LIMIT_PER_MINUTE: '1000' });
    const stored = await t.ctx.staking.events.storeImported(events, Date.now());
    expect(stored.inserted.size).toBe(events.length);
  });
  afterEach(async () => t.close());

  const get = (url: string, remoteAddress = '127.0.0.1') => t.app.inject({ url, remoteAddress });

  it('lists the round’s events where the address staked or was staked on, oldest first, without an API key', async () => {
    const res = await get(`/registry/gtc-stake/${alice.toUpperCase().replace('0X', '0x')}/1`);
    expect(res.statusCode).toBe(200);
    const { results } = res.json();
    expect(results.map((r: { block_number: number; tx_hash: string }) => r.tx_hash)).toEqual([tx(1001), tx(1100), tx(1200), tx(1203)]);
    expect(results[0]).toEqual({
      id: expect.any(Number),
      event_type: 'SelfStake',
      round_id: 1,
      staker: alice,
      address: alice,
      amount: BIG.toString(),
      staked: true,
      block_number: 10,
      tx_hash: tx(1001),
    });
    // Alice staking on Carol, and Bob staking on Alice: `address` is always the staked-on user.
    expect(results[1]).toMatchObject({ event_type: 'Xstake', staker: alice, address: carol, amount: '7', staked: true });
    expect(results[2]).toMatchObject({ event_type: 'Xstake', staker: bob, address: alice, amount: '5' });
    expect(results[3]).toMatchObject({ event_type: 'SelfStake', amount: '3', staked: false });
    // Ids are distinct integers.
    expect(new Set(results.map((r: { id: number }) => r.id)).size).toBe(4);
  });

  it('answers the same on govtoken-stake, and reads round "01" as round 1', async () => {
    const gtc = (await get(`/registry/gtc-stake/${alice}/1`)).json();
    expect((await get(`/registry/govtoken-stake/${alice}/1`)).json()).toEqual(gtc);
    expect((await get(`/registry/gtc-stake/${alice}/01`)).json()).toEqual(gtc);
  });

  it('keeps other rounds apart', async () => {
    const { results } = (await get(`/registry/gtc-stake/${alice}/2`)).json();
    expect(results).toEqual([expect.objectContaining({ round_id: 2, staker: bob, address: alice, amount: '9', block_number: 30 })]);
  });

  it('answers {"results":[]} for an unknown round and for an address without events', async () => {
    expect((await get(`/registry/gtc-stake/${alice}/77`)).json()).toEqual({ results: [] });
    expect((await get(`/registry/gtc-stake/0x${'9'.repeat(40)}/1`)).json()).toEqual({ results: [] });
  });

  it.each([
    ['a non-integer round', () => `/registry/gtc-stake/${alice}/1.5`, 'invalid_request'],
    ['a negative round', () => `/registry/gtc-stake/${alice}/-1`, 'invalid_request'],
    ['a word for a round', () => `/registry/gtc-stake/${alice}/latest`, 'invalid_request'],
    ['a malformed address', () => '/registry/gtc-stake/0x1234/1', 'invalid_address'],
  ])('refuses %s with 400', async (_what, url, code) => {
    const res = await get(url());
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ detail: expect.any(String), code });
  });

  it('numbers a later arrival after the earlier ones, yet lists it in chain order', async () => {
    const late = event({ type: 'selfStake', roundId: 1n, staker: alice, amount: 1n, blockNumber: 5, logIndex: 0 });
    await t.ctx.staking.events.storeImported([late], Date.now());
    const { results } = (await get(`/registry/gtc-stake/${alice}/1`)).json();
    // Oldest first by the chain, whatever the arrival order; the id is unique.
    expect(results[0].tx_hash).toBe(late.txHash);
    const ids = results.map((r: { id: number }) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(results[0].id).toBe(Math.max(...ids));
  });
});

describe.each(databaseKinds)('per-client-address budget of the keyless stake events route on %s', (kind) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp(kind, { STAKE_EVENTS_RATE_LIMIT_PER_MINUTE: '3' });
  });
  afterEach(async () => t.close());

  it('refuses the fourth request of a minute from one address with 429 and Retry-After, but not another address', async () => {
    const url = `/registry/gtc-stake/${alice}/1`;
    for (let i = 0; i < 3; i++) {
      const ok = await t.app.inject({ url, remoteAddress: '198.51.100.7' });
      expect(ok.statusCode).toBe(200);
      expect(ok.headers['ratelimit-limit']).toBe('3');
    }
    const refused = await t.app.inject({ url, remoteAddress: '198.51.100.7' });
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toEqual({ detail: expect.any(String), code: 'rate_limited' });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect((await t.app.inject({ url, remoteAddress: '198.51.100.8' })).statusCode).toBe(200);
    expect((await t.app.inject('/metrics')).body).toMatch(/^stampgate_rate_limit_rejections_total\{tier="stake_events"\} 1$/m);
    // Spending this budget leaves the API-key routes alone: they still want a key, not a rest.
    expect((await t.app.inject({ url: `/registry/gtc-stake/${alice}`, remoteAddress: '198.51.100.7' })).statusCode).toBe(401);
  });

  it('counts a whole IPv6 /64 as one address, and an IPv4-mapped address as its IPv4 address', async () => {
    const url = `/registry/gtc-stake/${alice}/1`;
    // Three addresses of one /64: one budget of 3.
    for (const address of ['2001:db8:5:6::1', '2001:db8:5:6:ffff::2', '2001:db8:5:6:a:b:c:d']) {
      expect((await t.app.inject({ url, remoteAddress: address })).statusCode).toBe(200);
    }
    expect((await t.app.inject({ url, remoteAddress: '2001:db8:5:6::99' })).statusCode).toBe(429);
    // The next /64 has its own.
    expect((await t.app.inject({ url, remoteAddress: '2001:db8:5:7::1' })).statusCode).toBe(200);
    // An IPv4 client seen through a dual-stack socket spends its IPv4 budget.
    for (let i = 0; i < 3; i++) expect((await t.app.inject({ url, remoteAddress: '198.51.100.20' })).statusCode).toBe(200);
    expect((await t.app.inject({ url, remoteAddress: '::ffff:198.51.100.20' })).statusCode).toBe(429);
  });
});
