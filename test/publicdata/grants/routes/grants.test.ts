import { Value } from '@sinclair/typebox/value';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GrantSchema } from '../../../../src/publicdata/grants/grant.schema.js';
import { createTestApp, type TestApp } from '../../../helpers/app.js';
import { databaseKinds } from '../../../helpers/databases.js';
import { addr, grantFixtures, importOk, profileFixtures } from '../../fixtures.js';

describe.each(databaseKinds)('GET /api/v0.1/grants/ on %s', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(kind, { PUBLIC_CACHE_TTL: '0' });
    await importOk(t.ctx, { profiles: profileFixtures, grants: grantFixtures });
  });
  afterAll(async () => t.close());

  const get = (query: string) => t.app.inject(`/api/v0.1/grants/${query}`);
  const ids = async (query: string) => {
    const res = await get(query);
    expect(res.statusCode, res.body).toBe(200);
    return (res.json() as { id: number }[]).map((g) => g.id);
  };

  it('lists active grants only, by id, each matching the documented schema', async () => {
    const res = await get('');
    expect(res.statusCode).toBe(200);
    const body = res.json() as Record<string, unknown>[];
    expect(body.map((g) => g.id)).toEqual([1, 2, 3]);
    for (const grant of body) expect(Value.Errors(GrantSchema, grant).First()).toBeUndefined();
  });

  it('renders decimals as strings and admin_profile/team_members as profile objects', async () => {
    const [grant] = (await get('?pk=1')).json();
    expect(grant).toMatchObject({
      id: 1,
      active: true,
      title: 'Solidity Linter',
      slug: 'solidity-linter',
      admin_address: addr('a1', 1),
      amount_received: '1234.50',
      required_gas_price: '0.5',
      grant_type: 'tech',
      metadata: {},
      network: 'mainnet',
    });
    expect(grant.admin_profile).toEqual({
      id: expect.any(Number),
      url: 'https://github.com/alice',
      handle: 'alice',
      keywords: ['solidity'],
      position: 3,
      avatar_url: 'https://img.example.org/alice.png',
      github_url: 'https://github.com/alice',
      total_earned: 12.75,
      organizations: {},
    });
    expect(grant.team_members.map((p: { handle: string }) => p.handle)).toEqual(['carol']);
    expect(grant.team_members[0].organizations).toEqual({ docs: 'member' });
    const [two] = (await get('?pk=2')).json();
    expect(two.admin_profile.handle).toBe('Bob');
    expect(two.team_members).toEqual([]);
    expect(two.amount_received).toBe('0');
  });

  it.each([
    // title, description, admin_address: exact, any case
    ['title=solidity%20linter', [1]],
    ['title=SOLIDITY%20LINTER', [1]],
    ['title=Solidity', []],
    ['title=Old%20Linter', []],
    ['description=a%20LINTER%20for%20solidity.', [1]],
    ['description=A%20linter', []],
    [`admin_address=${addr('a1', 1).toUpperCase().replace('0X', '0x')}`, [1, 3]],
    [`admin_address=${addr('a4', 4)}`, []],
    // keyword: substring of title, description or reference URL, any case
    ['keyword=LINT', [1]],
    ['keyword=translat', [3]],
    ['keyword=example.org', [2]],
    ['keyword=ethereum', [2]],
    ['keyword=spanish', [3]],
    ['keyword=%25', []],
    // grant_type: exact
    ['grant_type=tech', [1, 2]],
    ['grant_type=community', [3]],
    ['grant_type=Tech', []],
    ['grant_type=tec', []],
    // pk
    ['pk=2', [2]],
    ['pk=4', []],
    ['pk=99', []],
    // limit (and offset)
    ['limit=1', [1]],
    ['limit=2&offset=1', [2, 3]],
    ['limit=0', []],
    // filters combine with AND
    ['grant_type=tech&keyword=dashboard', [2]],
    [`admin_address=${addr('a1', 1)}&grant_type=community`, [3]],
    // unknown parameters are ignored
    ['foo=bar&active=false', [1, 2, 3]],
  ])('%s', async (query, expected) => {
    expect(await ids(`?${query}`)).toEqual(expected);
  });

  it.each([
    ['admin_address=0x123', 'invalid_address'],
    ['title=%00', 'invalid_parameter'],
    ['keyword=x%00', 'invalid_parameter'],
    ['admin_address=0x', 'invalid_address'],
    [`admin_address=0x${'a'.repeat(41)}`, 'invalid_address'],
    [`admin_address=${addr('a1', 1)}%00`, 'invalid_address'],
    ['pk=abc', 'invalid_request'],
    ['limit=1001', 'invalid_limit'],
    ['limit=x', 'invalid_limit'],
    ['pk=1e400', 'invalid_request'],
    ['offset=1e400', 'invalid_offset'],
  ])('refuses %s with 400 %s', async (query, code) => {
    const res = await get(`?${query}`);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ detail: expect.any(String), code });
  });
});
