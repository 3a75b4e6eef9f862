import { Value } from '@sinclair/typebox/value';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AddressExportSchema, ContributorInfoExportSchema } from '../../../../src/publicdata/exports/export.schema.js';
import { parseAddressExportFile, parseInfoExportFile } from '../../../../src/publicdata/exports/exports.service.js';
import { createTestApp, type TestApp } from '../../../helpers/app.js';
import { databaseKinds } from '../../../helpers/databases.js';
import { addr, fullFixture, importOk, wallet } from '../../fixtures.js';

const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const X = (n: number) => wallet(n);

describe('export file names', () => {
  it.each([
    ['all.json', { kind: 'all' }],
    ['round3.json', { kind: 'round', round: 3 }],
    ['grant12.json', { kind: 'grant', grant: 12, round: null }],
    ['grant12_round3.json', { kind: 'grant', grant: 12, round: 3 }],
    ['grant12_round_3.json', { kind: 'grant', grant: 12, round: 3 }],
    ['grant12_round__3.json', null],
    ['grant12.JSON', null],
    ['round.json', null],
    ['grantx.json', null],
    ['all.json.bak', null],
  ])('%s', (file, expected) => {
    expect(parseAddressExportFile(file)).toEqual(expected);
  });

  it('info files', () => {
    expect(parseInfoExportFile('grant2_round2.json')).toEqual({ grant: 2, round: 2 });
    expect(parseInfoExportFile('grant2_round_2.json')).toEqual({ grant: 2, round: 2 });
    expect(parseInfoExportFile('grant2.json')).toBeNull();
  });
});

describe.each(databaseKinds)('exports on %s', (kind) => {
  let t: TestApp;
  /** alice: admin of grant 1; carol: team member of grant 1; Bob: admin of grant 2 only. */
  const creds: Record<string, { _key: string; _secret: string }> = {};
  beforeAll(async () => {
    t = await createTestApp(kind, { PUBLIC_CACHE_TTL: '0' });
    await importOk(t.ctx, fullFixture());
    const profiles = await t.ctx.database.db.selectFrom('profiles').select(['id', 'handle']).execute();
    for (const { id, handle } of profiles) {
      const issued = await t.ctx.publicData.exportAuth.rotateCredentials(id);
      creds[handle] = { _key: issued._key, _secret: issued._secret! };
    }
  });
  afterAll(async () => t.close());

  const get = (path: string, who?: string) => {
    const query = who ? `?_key=${encodeURIComponent(creds[who]!._key)}&_secret=${encodeURIComponent(creds[who]!._secret)}` : '';
    return t.app.inject(`${path}${query}`);
  };
  const addresses = '/grants/v1/api/export_addresses';

  describe('without authentication', () => {
    it('grants.json lists active grants with where contributions go', async () => {
      const res = await get('/grants/grants.json');
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual([
        { title: 'Solidity Linter', admin_address: addr('a1', 1), token_address: addr('d1', 1), contract_address: addr('c1', 1), network: 'mainnet' },
        { title: 'Client Dashboard', admin_address: addr('a2', 2), token_address: null, contract_address: null, network: 'mainnet' },
        { title: 'Translations', admin_address: addr('a1', 1), token_address: null, contract_address: null, network: 'mainnet' },
      ]);
    });

    it('round<n>.json: distinct, sorted addresses of the round, opted-out users left out', async () => {
      const res = await get(`${addresses}/round1.json`);
      expect(res.statusCode).toBe(200);
      const body = res.json();
      expect(Value.Errors(AddressExportSchema, body).First()).toBeUndefined();
      expect(body.addresses).toEqual([X(1), X(6)]);
      expect(body.meta).toEqual({ generated_at: expect.stringMatching(DATE_TIME), count: 2, round: 1, grant: null });
      expect((await get(`${addresses}/round2.json`)).json().addresses).toEqual([X(3), X(4)]);
    });

    it('all.json: every address that funded a grant, in or outside a round, except opted-out users’ addresses', async () => {
      const body = (await get(`${addresses}/all.json`)).json();
      expect(body.addresses).toEqual([X(1), X(3), X(4), X(5), X(6)]);
      expect(body.meta).toMatchObject({ count: 5, round: null, grant: null });
      expect(body.meta.api_key).toBeUndefined();
    });

    it('ignores credentials on public exports', async () => {
      const body = (await get(`${addresses}/round1.json`, 'alice')).json();
      expect(body.meta.api_key).toBeUndefined();
    });

    it.each(['grant1.json', 'grant1_round1.json', 'grant1_round_1.json'])('refuses %s with 401 not_authenticated', async (file) => {
      const res = await get(`${addresses}/${file}`);
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({ detail: expect.any(String), code: 'not_authenticated' });
    });

    it('refuses export_info with 401 not_authenticated', async () => {
      const res = await get('/grants/v1/api/export_info/grant1_round1.json');
      expect(res.statusCode).toBe(401);
      expect(res.json().code).toBe('not_authenticated');
    });

    it.each([
      `${addresses}/round9.json`,
      `${addresses}/round0.json`,
      `${addresses}/nothing.json`,
      `${addresses}/grant1_round1.csv`,
      '/grants/v1/api/export_info/grant1.json',
    ])('answers %s with 404 not_found', async (path) => {
      const res = await get(path);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ detail: expect.any(String), code: 'not_found' });
    });
  });

  describe('as the grant admin (alice) or a team member (carol)', () => {
    it.each(['alice', 'carol'])('grant1.json for %s: every round and none', async (who) => {
      const res = await get(`${addresses}/grant1.json`, who);
      expect(res.statusCode).toBe(200);
      const body = res.json();
      expect(Value.Errors(AddressExportSchema, body).First()).toBeUndefined();
      expect(body.addresses).toEqual([X(1), X(3), X(5)]);
      expect(body.meta).toEqual({ generated_at: expect.stringMatching(DATE_TIME), count: 3, round: null, grant: 1 });
    });

    it('grant<id>_round<n>.json and grant<id>_round_<n>.json are the same export', async () => {
      const a = (await get(`${addresses}/grant1_round1.json`, 'alice')).json();
      const b = (await get(`${addresses}/grant1_round_1.json`, 'alice')).json();
      expect(a.addresses).toEqual([X(1)]);
      expect(b.addresses).toEqual(a.addresses);
      expect(a.meta).toMatchObject({ round: 1, grant: 1, count: 1 });
      expect((await get(`${addresses}/grant1_round2.json`, 'carol')).json().addresses).toEqual([X(3)]);
    });

    it('export_info: contributors in time order; an anonymized one shows no handle or picture', async () => {
      const res = await get('/grants/v1/api/export_info/grant2_round2.json', 'Bob');
      expect(res.statusCode).toBe(200);
      const body = res.json();
      expect(Value.Errors(ContributorInfoExportSchema, body).First()).toBeUndefined();
      expect(body.meta).toMatchObject({ count: 2, round: 2, grant: 2 });
      expect(body.contributors).toEqual([
        { handle: null, picture: null, anonymized: true, comment: 'keep me anonymous' },
        { handle: null, picture: null, anonymized: false, comment: 'from a shared wallet' },
      ]);
      const info = (await get('/grants/v1/api/export_info/grant1_round_1.json', 'alice')).json();
      expect(info.contributors).toEqual([
        { handle: 'erin', picture: 'https://img.example.org/erin.png', anonymized: false, comment: 'first!' },
        { handle: 'dave', picture: 'https://img.example.org/dave.png', anonymized: false, comment: '' },
        { handle: 'erin', picture: 'https://img.example.org/erin.png', anonymized: false, comment: '' },
      ]);
    });

    it.each([
      [`${addresses}/grant99.json`],
      [`${addresses}/grant1_round9.json`],
      ['/grants/v1/api/export_info/grant99_round1.json'],
      ['/grants/v1/api/export_info/grant1_round9.json'],
    ])('answers an unknown grant or round (%s) with 404', async (path) => {
      const res = await get(path, 'alice');
      expect(res.statusCode).toBe(404);
      expect(res.json().code).toBe('not_found');
    });

    it('serves an inactive grant’s export to its team', async () => {
      await t.ctx.database.db.updateTable('grants').set({ admin_profile_id: (await profileId('frank'))! }).where('id', '=', 4).execute();
      const res = await get(`${addresses}/grant4.json`, 'frank');
      expect(res.statusCode).toBe(200);
      expect(res.json().addresses).toEqual([]);
    });
  });

  describe('as someone else', () => {
    it.each([
      [`${addresses}/grant1.json`],
      [`${addresses}/grant1_round1.json`],
      [`${addresses}/grant1_round_1.json`],
      ['/grants/v1/api/export_info/grant1_round1.json'],
    ])('refuses %s with 403 not_team_member', async (path) => {
      for (const who of ['Bob', 'erin']) {
        const res = await get(path, who);
        expect(res.statusCode).toBe(403);
        expect(res.json()).toEqual({ detail: expect.any(String), code: 'not_team_member' });
      }
    });
  });

  async function profileId(handle: string) {
    return (await t.ctx.database.db.selectFrom('profiles').select('id').where('handle', '=', handle).executeTakeFirst())?.id;
  }
});
