import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../helpers/app.js';
import { databaseKinds } from '../../../helpers/databases.js';
import { importOk } from '../../fixtures.js';
import { BountiesEndpoint, HttpError, type PythonValue } from '../../python-client.js';
import { vocabularyFixtures } from '../../vocabulary-fixtures.js';

/** The 48 `order_by` names the original service's public client accepts (its validation list). */
const CLIENT_ORDER_NAMES = [
  'web3_type', 'title', 'web3_created', 'value_in_token', 'token_name', 'token_address', 'bounty_type', 'project_length',
  'experience_level', 'github_url', 'github_comments', 'bounty_owner_address', 'bounty_owner_email', 'bounty_owner_github_username',
  'bounty_owner_name', 'is_open', 'expires_date', 'raw_data', 'metadata', 'current_bounty', '_val_usd_db', 'contract_address', 'network',
  'idx_experience_level', 'idx_project_length', 'idx_status', 'issue_description', 'standard_bounties_id', 'num_fulfillments',
  'balance', 'accepted', 'interested', 'interested_comment', 'submissions_comment', 'override_status', 'last_comment_date',
  'fulfillment_accepted_on', 'fulfillment_submitted_on', 'fulfillment_started_on', 'canceled_on', 'snooze_warnings_for_days',
  'token_value_time_peg', 'token_value_in_usdt', 'value_in_usdt_now', 'value_in_usdt', 'value_in_eth', 'value_true', 'privacy_preferences',
];

type Bounty = Record<string, unknown> & { pk: number };

/**
 * What each order sorts by, read from the served object: an independent
 * statement of the vocabulary (aliases, decimals as numbers, JSON as its text,
 * `interested` by count). Null = no value.
 */
function sortKey(name: string, b: Bounty): string | number | null {
  const field = { _val_usd_db: 'value_in_usdt', idx_status: 'status', idx_experience_level: 'experience_level', idx_project_length: 'project_length' }[name] ?? name;
  const value = b[field];
  if (value === null || value === undefined) return null;
  if (field === 'interested') return (value as unknown[]).length;
  if (['value_in_token', 'balance'].includes(field)) return Number(value);
  if (typeof value === 'boolean') return value ? 1 : 0;
  // JSON fields sort by their stored text (a JSON string's text starts with its quote).
  if (typeof value === 'object' || field === 'raw_data') return JSON.stringify(value);
  return value as string | number;
}

/** Expected pks: by key in the direction, ties by pk in the same direction, no value last either way. */
function expectedOrder(rows: Bounty[], name: string, descending: boolean): number[] {
  const sign = descending ? -1 : 1;
  return [...rows]
    .sort((a, b) => {
      const ka = sortKey(name, a);
      const kb = sortKey(name, b);
      if (ka === null || kb === null) return ka === kb ? sign * (a.pk - b.pk) : ka === null ? 1 : -1;
      if (ka !== kb) return sign * (ka < kb ? -1 : 1);
      return sign * (a.pk - b.pk);
    })
    .map((b) => b.pk);
}

describe.each(databaseKinds)('the Python bounty client against a listening server on %s', (kind) => {
  let t: TestApp;
  let origin: string;
  const client = (legacy = false) =>
    legacy ? new BountiesEndpoint(`${origin}/api/v0.1/bounties`, true) : new BountiesEndpoint(`${origin}/api/v0.1/bounties/`);
  const pks = (body: unknown) => (body as Bounty[]).map((b) => b.pk);

  beforeAll(async () => {
    t = await createTestApp(kind, { PUBLIC_CACHE_TTL: '0' });
    await importOk(t.ctx, { bounties: vocabularyFixtures() });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    origin = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => t.close());

  it('all(): every bounty, newest first, with X-Total-Count and no next link', async () => {
    const api = client();
    expect(pks(await api.all())).toEqual([6, 5, 4, 3, 2, 1]);
    expect(api.sent[0]!.url).toBe(`${origin}/api/v0.1/bounties/`);
    expect(api.sent[0]!.headers.get('x-total-count')).toBe('6');
    expect(api.sent[0]!.headers.get('link')).toBeNull();
  });

  it('get_page(n, per_page) = limit/offset; X-Total-Count counts every match; Link names the next page', async () => {
    const api = client().filter({ is_open: false });
    expect(pks(await api.getPage(1, 2))).toEqual([6, 5]);
    expect(api.sent[0]!.url).toBe(`${origin}/api/v0.1/bounties/?is_open=False&limit=2&offset=0`);
    expect(api.sent[0]!.headers.get('x-total-count')).toBe('3');
    expect(api.sent[0]!.headers.get('link')).toBe(`<${origin}/api/v0.1/bounties/?is_open=False&limit=2&offset=2>; rel="next"`);
    expect(pks(await api.getPage(2, 2))).toEqual([4]);
    expect(api.sent[1]!.headers.get('link')).toBeNull();
    // all() drops limit and offset again.
    expect(pks(await api.all())).toEqual([6, 5, 4]);
    expect(api.sent[2]!.url).toBe(`${origin}/api/v0.1/bounties/?is_open=False`);
    // The default page size of get_page.
    expect(pks(await client().getPage())).toHaveLength(6);
  });

  it('get(pk): the one object at base + pk (no trailing slash), parameters ignored; 404 raises', async () => {
    const one = (await client().get(3)) as Bounty;
    expect(one.pk).toBe(3);
    expect(Array.isArray(one)).toBe(false);
    expect(one.network).toBe('mainnet');
    expect(one.interested).toEqual(['dev2']);
    const filtered = client().filter({ network: 'xdai' });
    expect(((await filtered.get(3)) as Bounty).pk).toBe(3);
    expect(filtered.sent[0]!.url).toBe(`${origin}/api/v0.1/bounties/3?network=xdai`);
    await expect(client().get(99)).rejects.toEqual(new HttpError(404, `${origin}/api/v0.1/bounties/99`));
    const slashed = await fetch(`${origin}/api/v0.1/bounties/3/`);
    expect(((await slashed.json()) as Bounty).pk).toBe(3);
  });

  it('older releases (endpoint without slash, get joined with /) follow the 301 and get the same answers', async () => {
    const api = client(true).filter({ idx_status: 'open' }).filter({ idx_status: 'done' });
    expect(pks(await api.all())).toEqual([6, 4, 1]);
    expect(api.sent[0]!.redirected).toBe(true);
    expect(api.sent[0]!.url).toBe(`${origin}/api/v0.1/bounties/?idx_status=open%2Cdone`);
    expect(((await client(true).get(2)) as Bounty).pk).toBe(2);
    const redirect = await fetch(`${origin}/api/v0.1/grants?limit=1&x=%2C`, { redirect: 'manual' });
    expect(redirect.status).toBe(301);
    expect(redirect.headers.get('location')).toBe('/api/v0.1/grants/?limit=1&x=%2C');
  });

  describe('every filter it sends is applied', () => {
    const cases: [Record<string, PythonValue>[], number[] | 400][] = [
      [[{ bounty_owner_github_username: 'alice' }], [3, 1]],
      [[{ bounty_owner_github_username: 'ALICE' }, { bounty_owner_github_username: 'Bob' }], [6, 3, 2, 1]],
      [[{ idx_status: 'submitted' }], [3]],
      [[{ idx_status: 'open' }, { idx_status: 'expired' }], [6, 5, 1]],
      [[{ network: 'mainnet' }], [6, 3, 1]],
      [[{ network: 'Mainnet' }], []],
      [[{ network: 'rinkeby' }, { network: 'xdai' }], [5, 2]],
      [[{ standard_bounties_id: 101 }], [1]],
      [[{ standard_bounties_id: 7 }, { standard_bounties_id: 3000 }], [5, 2]],
      [[{ standard_bounties_id: 'seven' }], 400],
      [[{ pk__gt: 3 }], [6, 5, 4]],
      [[{ pk__gt: 3 }, { pk__gt: 5 }], [6]],
      [[{ started: 'dev1' }], [6, 5, 1]],
      [[{ interested_github_username: 'DEV2' }], [3, 1]],
      [[{ started: 'dev1', interested_github_username: 'dev2' }], [1]],
      [[{ fulfiller_github_username: 'erin' }], [6, 4]],
      [[{ fulfiller_github_username: 'dev3' }], [3]],
      [[{ fulfiller_github_username: 'nobody' }], []],
      [[{ raw_data: 'gas' }], [6, 3, 1]],
      [[{ raw_data: 'solidity' }, { raw_data: 'GAS' }], [1]],
      [[{ raw_data: '100%' }], []],
      // Open = not completed and not past expires_date (bounty 6 is open but expired).
      [[{ is_open: true }], [3, 2, 1]],
      [[{ is_open: false }], [6, 5, 4]],
      [[{ experience_level: 'beginner' }, { experience_level: 'Advanced' }], [4, 3, 1]],
      [[{ project_length: 'Days' }, { bounty_type: 'feature' }], [5, 2]],
      [[{ github_url: 'https://github.com/org/repo/issues/2' }, { github_url: 'https://github.com/org/repo/issues/5' }], [5, 2]],
      [[{ bounty_owner_address: '0xAAAA' }], [2, 1]],
      [[{ network: 'mainnet', idx_status: 'open', is_open: true, bounty_owner_github_username: 'alice' }], [1]],
    ];
    it.each(cases)('%j → %j', async (filters, expected) => {
      const api = client();
      for (const f of filters) api.filter(f);
      if (expected === 400) {
        await expect(api.all()).rejects.toEqual(expect.objectContaining({ status: 400 }));
        return;
      }
      const body = await api.all();
      expect(pks(body)).toEqual(expected);
      expect(api.sent[0]!.headers.get('x-total-count')).toBe(String(expected.length));
    });

    it('ignores a parameter outside both vocabularies (format=json)', async () => {
      expect(pks(await client().filter({ network: 'mainnet' }).addUnchecked('format', 'json').all())).toEqual([6, 3, 1]);
    });
  });

  describe('every one of its 48 order_by names sorts, ascending and descending, nulls last', () => {
    let rows: Bounty[];
    beforeAll(async () => {
      rows = (await client().all()) as Bounty[];
    });

    it('has 48 names', () => expect(new Set(CLIENT_ORDER_NAMES).size).toBe(48));

    it.each(CLIENT_ORDER_NAMES.flatMap((name) => [name, `-${name}`]))('order_by=%s', async (order) => {
      const descending = order.startsWith('-');
      const expected = expectedOrder(rows, descending ? order.slice(1) : order, descending);
      const api = client().orderBy(order);
      expect(pks(await api.all())).toEqual(expected);
      // Paged through get_page as well, crossing from rows with a value to rows without one.
      const paged = [];
      for (let page = 1; page <= 3; page++) paged.push(...pks(await client().orderBy(order).getPage(page, 2)));
      expect(paged).toEqual(expected);
    });

    it('spot checks written out by hand', async () => {
      expect(pks(await client().orderBy('interested').all())).toEqual([2, 3, 6, 1, 5, 4]);
      // '10' and '10.0' are one value: the tie goes by pk, descending here.
      expect(pks(await client().orderBy('-balance').all())).toEqual([4, 6, 1, 2, 5, 3]);
      expect(pks(await client().orderBy('-_val_usd_db').all())).toEqual([5, 6, 1, 3, 4, 2]);
      expect(pks(await client().orderBy('idx_status').all())).toEqual([4, 5, 1, 6, 2, 3]);
    });
  });
});
