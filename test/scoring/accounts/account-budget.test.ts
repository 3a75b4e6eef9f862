/**
 * Capacity belongs to the account, over a listening server: every key of an account and its portal
 * session spend one rate budget (by the account's tier) and one daily batch quota, key creation is
 * counted in that budget, and an account holds at most MAX_API_KEYS_PER_ACCOUNT live keys. With the
 * per-process counter and with Redis.
 */
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { createTestApp, seedAccount, type TestApp } from '../../helpers/app.js';
import { databaseKinds } from '../../helpers/databases.js';
import { testWallet } from '../../helpers/stamps.js';
import { portalSignIn } from '../../portal/portal-helpers.js';

const redisUrl = inject('redisUrl');
const stores: [string, Record<string, string>][] = [['the per-process counter', {}]];
if (redisUrl) stores.push(['Redis', { REDIS_URL: redisUrl }]);

const addressNo = (n: number) => '0x' + n.toString(16).padStart(40, '0');
const addresses = (count: number, from = 1) => Array.from({ length: count }, (_, i) => addressNo(from + i));

describe.each(databaseKinds)('account budgets on %s', (kind) => {
  describe.each(stores)('with %s', (_name, env) => {
    let t: TestApp;
    let base: string;
    beforeEach(async () => {
      t = await createTestApp(kind, { ...env, MAX_API_KEYS_PER_ACCOUNT: '5', BATCH_DAILY_ADDRESSES: '6,12,24,48' });
      await t.app.listen({ host: '127.0.0.1', port: 0 });
      base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    });
    afterEach(async () => t.close());

    const send = async (method: string, path: string, headers: Record<string, string>, body?: object) => {
      const res = await fetch(`${base}${path}`, {
        method,
        headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      return { status: res.status, headers: res.headers, json: (await res.json()) as Record<string, unknown> };
    };
    const read = (key: string) => send('GET', '/registry/stamp-metadata', { 'x-api-key': key });
    const mint = (key: string, name: string) => send('POST', '/v2/account/keys', { 'x-api-key': key }, { name });
    const spend = async (key: string, requests: number) => {
      for (let i = 0; i < requests; i++) expect((await read(key)).status).toBe(200);
    };

    it('refuses to create a key once the creating key has spent its budget, and creates none', async () => {
      const { key, account } = await seedAccount(t.ctx, { tier: 1 });
      await spend(key, 125);
      const refused = await mint(key, 'fresh budget');
      expect(refused.status).toBe(429);
      expect(refused.json).toMatchObject({ code: 'rate_limited' });
      expect(refused.headers.get('retry-after')).not.toBeNull();
      expect((await t.ctx.apiKeys.list(account.id)).length).toBe(1);
    }, 60_000);

    it('gives an account 125 requests in all, however many keys it mints (creations included)', async () => {
      const { key } = await seedAccount(t.ctx, { tier: 1 });
      const keys = [key];
      for (const name of ['b', 'c', 'd']) {
        const created = await mint(key, name);
        expect(created.status).toBe(201);
        keys.push(created.json.key as string);
      }
      let answered = 3;
      let refusedInARow = 0;
      for (let i = 0; refusedInARow < keys.length && i < 1000; i++) {
        const res = await read(keys[i % keys.length]!);
        if (res.status === 200) {
          answered += 1;
          refusedInARow = 0;
        } else {
          expect(res.status).toBe(429);
          refusedInARow += 1;
        }
      }
      expect(answered).toBe(125);
    }, 60_000);

    it('shares one budget between two keys: spent on one, the other is refused with the account\'s figures', async () => {
      const { key, account } = await seedAccount(t.ctx, { tier: 1 });
      const { key: other } = await t.ctx.apiKeys.create(account.id, { tier: 1 });
      const first = await read(other);
      expect(first.headers.get('ratelimit-remaining')).toBe('124');
      await spend(key, 124);
      const refused = await read(other);
      expect(refused.status).toBe(429);
      expect(refused.headers.get('ratelimit-limit')).toBe('125');
      expect(refused.headers.get('ratelimit-remaining')).toBe('0');
      // Another account is untouched.
      expect((await read((await seedAccount(t.ctx, { tier: 1 })).key)).status).toBe(200);
    }, 60_000);

    it('keeps a key to its own tier inside a larger account budget', async () => {
      const { key, account } = await seedAccount(t.ctx, { tier: 1 });
      const { key: big } = await t.ctx.apiKeys.create(account.id, { tier: 3 });
      await spend(key, 125);
      expect((await read(key)).status).toBe(429);
      const roomy = await read(big);
      expect(roomy.status).toBe(200);
      // The account's 2000, less the 126 its tier-1 key spent and this one.
      expect(roomy.headers.get('ratelimit-limit')).toBe('2000');
      expect(roomy.headers.get('ratelimit-remaining')).toBe(String(2000 - 127));
    }, 60_000);

    it('shares the daily batch quota between the keys of an account: a freshly minted key is refused too', async () => {
      const { key, scorer, account } = await seedAccount(t.ctx, { tier: 1 });
      const batch = (k: string, count: number, from: number) => send('POST', `/v2/scorers/${scorer.id}/batches`, { 'x-api-key': k }, { addresses: addresses(count, from) });
      expect((await batch(key, 4, 1)).status).toBe(202);
      const minted = await mint(key, 'second quota');
      expect(minted.status).toBe(201);
      const fresh = minted.json.key as string;
      const over = await batch(fresh, 4, 100);
      expect(over.status).toBe(429);
      expect(over.json).toMatchObject({ code: 'batch_quota_exceeded' });
      expect(String(over.json.detail)).toContain('account');
      // What is left of the account's 6 is still there for either key.
      expect((await batch(fresh, 2, 200)).status).toBe(202);
      expect((await batch(key, 1, 300)).status).toBe(429);
      const rows = await t.ctx.database.db.selectFrom('batch_usage').select(['account_id', 'addresses']).execute();
      expect(rows.map((row) => [Number(row.account_id), Number(row.addresses)])).toEqual([[account.id, 6]]);
    }, 60_000);

    it('refuses the key past MAX_API_KEYS_PER_ACCOUNT with 409 api_key_limit_reached, until one is revoked', async () => {
      const { key, account } = await seedAccount(t.ctx, { tier: 1 });
      for (const name of ['2', '3', '4', '5']) expect((await mint(key, name)).status).toBe(201);
      const refused = await mint(key, '6');
      expect(refused.status).toBe(409);
      expect(refused.json).toEqual({ code: 'api_key_limit_reached', detail: `Account ${account.id} has 5 live API keys already (MAX_API_KEYS_PER_ACCOUNT); revoke one first.` });
      expect((await t.ctx.apiKeys.list(account.id)).length).toBe(5);
      // The operator's command line is held to the same cap.
      await expect(t.ctx.apiKeys.create(account.id, { tier: 2 })).rejects.toMatchObject({ code: 'api_key_limit_reached' });
      const victim = (await t.ctx.apiKeys.list(account.id))[4]!;
      expect((await send('DELETE', `/v2/account/keys/${victim.prefix}`, { 'x-api-key': key })).status).toBe(200);
      expect((await mint(key, '6')).status).toBe(201);
    }, 60_000);

    it('gives a portal session its account\'s tier and budget, never more', async () => {
      const login = await portalSignIn(t.app, testWallet(451));
      const asSession = () => send('GET', '/v2/account', { cookie: login.cookie });
      // An account without keys is tier 1, as every self-service key.
      const first = await asSession();
      expect(first.status).toBe(200);
      expect(first.headers.get('ratelimit-limit')).toBe('125');
      const { key } = await t.ctx.apiKeys.create(login.accountId, { tier: 1 });
      // Until the key is refused: the account's budget is then spent whatever the counting.
      let status = 200;
      for (let i = 0; i < 300 && status === 200; i++) status = (await read(key)).status;
      expect(status).toBe(429);
      const refused = await asSession();
      expect(refused.status).toBe(429);
      // An operator grants a tier by creating a key of it: the session follows the account.
      await t.ctx.apiKeys.create(login.accountId, { tier: 3 });
      const raised = await asSession();
      expect(raised.status).toBe(200);
      expect(raised.headers.get('ratelimit-limit')).toBe('2000');
    }, 60_000);
  });
});
