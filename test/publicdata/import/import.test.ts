import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/index.js';
import { createPublicDataModule } from '../../../src/publicdata/publicdata.module.js';
import { AppError } from '../../../src/errors.js';
import { DEMO_DATA_URL } from '../../../src/publicdata/import/import.service.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { databaseKinds } from '../../helpers/databases.js';
import { bountyFixtures, fullFixture, importOk, resetPublicData, wallet } from '../fixtures.js';

const demo = JSON.parse(readFileSync(DEMO_DATA_URL, 'utf8'));

describe.each(databaseKinds)('data import on %s', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(kind);
  });
  afterAll(async () => t.close());
  beforeEach(async () => resetPublicData(t.ctx));

  const count = async (table: 'profiles' | 'grants' | 'grant_rounds' | 'contributions' | 'bounties' | 'grant_team_members') =>
    Number((await t.ctx.database.db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);

  it('loads the demo data set into an empty development database, once', async () => {
    const loaded = await t.ctx.publicData.loadDemoDataIfEmpty();
    expect(loaded?.problems).toEqual([]);
    expect(loaded?.sections).toMatchObject({
      profiles: { created: demo.profiles.length, updated: 0, rejected: 0 },
      grants: { created: demo.grants.length },
      rounds: { created: 3 },
      contributions: { created: demo.contributions.length },
      bounties: { created: demo.bounties.length },
    });
    expect(await t.ctx.publicData.loadDemoDataIfEmpty()).toBeNull();
    // The demo set covers what the API shows: every bounty status, an opted-out and an anonymized contributor.
    expect(new Set(demo.bounties.map((b: { status: string }) => b.status))).toEqual(new Set(['open', 'started', 'submitted', 'done', 'expired']));
    expect(demo.profiles.some((p: { export_opt_out?: boolean }) => p.export_opt_out)).toBe(true);
    expect(demo.contributions.some((c: { anonymized?: boolean }) => c.anonymized)).toBe(true);
    const bounties = (await t.app.inject('/api/v0.1/bounties/')).json();
    expect(bounties).toHaveLength(demo.bounties.length);
  });

  it('does not load the demo data in production', async () => {
    const production = createPublicDataModule(loadConfig({ STAMPGATE_ENV: 'production' }), t.ctx.database);
    expect(await production.loadDemoDataIfEmpty()).toBeNull();
    expect(await count('bounties')).toBe(0);
  });

  it('updates on re-import by natural key and never duplicates', async () => {
    await importOk(t.ctx, fullFixture());
    const before = {
      profiles: await count('profiles'),
      grants: await count('grants'),
      rounds: await count('grant_rounds'),
      contributions: await count('contributions'),
      bounties: await count('bounties'),
    };
    const again = await importOk(t.ctx, fullFixture());
    expect(again.sections.bounties).toEqual({ created: 0, updated: 6, rejected: 0 });
    expect(again.sections.profiles).toEqual({ created: 0, updated: 6, rejected: 0 });
    expect({
      profiles: await count('profiles'),
      grants: await count('grants'),
      rounds: await count('grant_rounds'),
      contributions: await count('contributions'),
      bounties: await count('bounties'),
    }).toEqual(before);

    // Changed fields are updated; a profile handle matches in any case and keeps its id.
    const aliceId = (await t.ctx.database.db.selectFrom('profiles').select('id').where('handle_key', '=', 'alice').executeTakeFirstOrThrow()).id;
    await importOk(t.ctx, {
      profiles: [{ handle: 'ALICE', position: 1 }],
      grants: [{ id: 1, title: 'Solidity Linter 2', admin_address: wallet(9), admin_profile: 'alice', team_members: ['erin', 'Bob'] }],
      bounties: [{ ...bountyFixtures()[0], title: 'Alpha (renamed)', status: 'done' }],
    });
    const alice = await t.ctx.database.db.selectFrom('profiles').selectAll().where('handle_key', '=', 'alice').executeTakeFirstOrThrow();
    expect(alice).toMatchObject({ id: aliceId, handle: 'ALICE', position: 1 });
    const [grant] = (await t.app.inject('/api/v0.1/grants/?pk=1')).json();
    expect(grant.title).toBe('Solidity Linter 2');
    expect(grant.team_members.map((p: { handle: string }) => p.handle).sort()).toEqual(['Bob', 'erin']);
    const [bounty] = (await t.app.inject('/api/v0.1/bounties/?pk=1')).json();
    expect(bounty).toMatchObject({ title: 'Alpha (renamed)', status: 'done', is_open: false });
  });

  it('removes an opted-out user’s addresses from every address export', async () => {
    await importOk(t.ctx, fullFixture());
    const alice = await t.ctx.database.db.selectFrom('profiles').select('id').where('handle_key', '=', 'alice').executeTakeFirstOrThrow();
    const { _key, _secret } = await t.ctx.publicData.exportAuth.rotateCredentials(alice.id);
    const auth = `?_key=${_key}&_secret=${_secret}`;
    const exportsOf = async () =>
      Promise.all(
        ['round1.json', 'all.json', `grant1.json${auth}`, `grant1_round1.json${auth}`].map(
          async (file) => (await t.app.inject(`/grants/v1/api/export_addresses/${file}`)).json().addresses as string[],
        ),
      );
    for (const addresses of await exportsOf()) expect(addresses).toContain(wallet(1));
    await importOk(t.ctx, { profiles: [{ handle: 'erin', export_opt_out: true }] });
    for (const addresses of await exportsOf()) {
      expect(addresses).not.toContain(wallet(1));
      expect(addresses).not.toContain(wallet(2));
    }
    await importOk(t.ctx, { profiles: [{ handle: 'erin', export_opt_out: false }] });
    expect((await exportsOf())[1]).toContain(wallet(1));
  });

  it('reports every bad record by position and field, and stores the good ones', async () => {
    const good = bountyFixtures()[0];
    const result = await t.ctx.publicData.imports.importDocument(
      {
        profiles: [{ handle: 'ok' }, { handle: 'has space' }, 'not an object', { handle: 'x', total_earned: 0.1, keywords: 'a,b' }],
        rounds: [{ number: 1, start: '2026-01-01T00:00:00Z', end: '2026-01-02T00:00:00Z' }, { number: 0, start: 'yesterday', end: '2025-01-01' }],
        grants: [
          { id: 1, title: 'Good', admin_address: wallet(1), admin_profile: 'OK' },
          { id: 2, title: 'Bad admin', admin_address: wallet(2), admin_profile: 'nobody', team_members: ['ok', 'ghost'] },
          { id: 3, admin_address: '0x123', amount_received: '-5', logo: 'ftp://x' },
        ],
        contributions: [
          { id: 1, grant: 1, round: 1, address: wallet(1), contributor: 'ok', amount: '1.5', token: 'DAI', created_on: '2026-01-01T10:00:00Z' },
          { id: 2, grant: 9, round: 7, address: wallet(1), contributor: 'ghost', amount: '1', token: 'DAI', created_on: '2026-01-01T10:00:00Z' },
          { id: 3, grant: 1, address: 'nope', amount: 'ten', created_on: 5 },
        ],
        bounties: [
          good,
          { ...good, id: 2, value_in_token: '1e5' },
          { ...good, id: 3, status: 'closed' },
          { ...good, id: 4, status: 'done', is_open: true },
          { ...good, id: 5, title: '', bounty_owner_address: '0xZZ', expires_date: 'soon', value_in_eth: 1.5, metadata: [] },
          { ...good, id: 6, github_url: 'not a url', action_urls: 'x', paid: {} },
          { ...good, id: 7, title: 'nul\u0000byte', metadata: { ok: 'nul\u0000inside JSON is fine' } },
        ],
        bountys: [],
        rounds_extra: 1,
      },
      'mixed.json',
    );
    const lines = result.problems.map((p) => `${p.at}: ${p.problem}`);
    expect(lines).toEqual(
      expect.arrayContaining([
        'bountys: unknown section (expected profiles, rounds, grants, contributions, bounties)',
        'profiles[1].handle: not a handle (letters, digits, - _ . ; at most 100)',
        'profiles[2]: not a JSON object',
        'profiles[3].total_earned: not a decimal (write fractional amounts as strings, e.g. "0.25")',
        'profiles[3].keywords: not an array of strings',
        'rounds[1].number: not a positive whole number',
        'rounds[1].start: not an ISO 8601 date-time (e.g. 2026-03-01T12:00:00Z)',
        'grants[1].admin_profile: unknown profile "nobody"',
        'grants[1].team_members[1]: unknown profile "ghost"',
        'grants[2].title: missing',
        'grants[2].admin_address: not an address (0x and 40 hexadecimal digits)',
        'grants[2].amount_received: not a decimal',
        'grants[2].logo: not an http(s) URL',
        'contributions[1].grant: unknown grant 9',
        'contributions[1].round: unknown round 7',
        'contributions[1].contributor: unknown profile "ghost"',
        'contributions[2].address: not an address (0x and 40 hexadecimal digits)',
        'contributions[2].amount: not a decimal',
        'contributions[2].token: missing',
        'contributions[2].created_on: not an ISO 8601 date-time (e.g. 2026-03-01T12:00:00Z)',
        'bounties[1].value_in_token: not a decimal',
        'bounties[2].status: not one of open, started, submitted, done, expired',
        'bounties[3].is_open: true contradicts status "done"',
        'bounties[4].title: empty',
        'bounties[4].bounty_owner_address: not an address (0x and 40 hexadecimal digits)',
        'bounties[4].expires_date: not an ISO 8601 date-time (e.g. 2026-03-01T12:00:00Z)',
        'bounties[4].value_in_eth: not a decimal (write fractional amounts as strings, e.g. "0.25")',
        'bounties[4].metadata: not a JSON object',
        'bounties[5].github_url: not an http(s) URL',
        'bounties[5].action_urls: not a JSON object',
        'bounties[5].paid: not a JSON array',
        'bounties[6].title: contains a NUL character',
      ]),
    );
    expect(lines.some((l) => l.startsWith('rounds_extra'))).toBe(true);
    // In document order: sections as stored, records by position (reference checks included).
    expect(lines.indexOf('grants[1].team_members[1]: unknown profile "ghost"')).toBeLessThan(lines.indexOf('grants[2].title: missing'));
    expect(lines.indexOf('contributions[1].grant: unknown grant 9')).toBeLessThan(lines.indexOf('contributions[2].token: missing'));
    expect(lines.indexOf('bountys: unknown section (expected profiles, rounds, grants, contributions, bounties)')).toBe(0);
    expect(result.sections).toEqual({
      profiles: { created: 1, updated: 0, rejected: 3 },
      rounds: { created: 1, updated: 0, rejected: 1 },
      grants: { created: 1, updated: 0, rejected: 2 },
      contributions: { created: 1, updated: 0, rejected: 2 },
      bounties: { created: 1, updated: 0, rejected: 6 },
    });
    expect(await count('bounties')).toBe(1);
    expect(await count('contributions')).toBe(1);
    const [grant] = (await t.app.inject('/api/v0.1/grants/')).json();
    expect(grant).toMatchObject({ id: 1, title: 'Good', admin_profile: { handle: 'ok' } });
  });

  it('refuses a document that is not an object', async () => {
    await expect(t.ctx.publicData.imports.importDocument([1, 2], 'list.json')).rejects.toThrow(AppError);
    await expect(t.ctx.publicData.imports.importDocument('x')).rejects.toThrow(/must be a JSON object/);
  });

  it('reports a section that is not an array', async () => {
    const result = await t.ctx.publicData.imports.importDocument({ bounties: {} });
    expect(result.problems).toEqual([{ at: 'bounties', problem: 'not an array' }]);
  });

  it('keeps the last of duplicate records in one document', async () => {
    const [first] = bountyFixtures();
    const result = await importOk(t.ctx, { bounties: [first, { ...first, title: 'second copy' }] });
    expect(result.sections.bounties).toEqual({ created: 1, updated: 0, rejected: 0 });
    expect((await t.app.inject('/api/v0.1/bounties/')).json()[0].title).toBe('second copy');
  });

  it('reads the vocabulary fields: absent = null, wrong types refused, people replaced on re-import', async () => {
    const [good] = bountyFixtures();
    const result = await t.ctx.publicData.imports.importDocument(
      {
        bounties: [
          { ...good, id: 1, interested: ['Dev1'], fulfillments: [{ fulfiller_github_username: 'Dev2', note: 'kept' }] },
          { ...good, id: 2 },
          {
            ...good,
            id: 3,
            interested: ['has space'],
            fulfillments: [{ accepted: true }, 'x'],
            standard_bounties_id: -1,
            balance: 1.5,
            accepted: 'yes',
            canceled_on: 'never',
            network: 7,
            privacy_preferences: [],
            raw_data: 'x'.repeat(100_001),
          },
        ],
      },
      'vocabulary.json',
    );
    expect(result.problems.map((p) => `${p.at}: ${p.problem}`).sort()).toEqual([
      'bounties[2].network: not a string',
      'bounties[2].standard_bounties_id: not a whole number ≥ 0',
      'bounties[2].balance: not a decimal (write fractional amounts as strings, e.g. "0.25")',
      'bounties[2].accepted: not true or false',
      'bounties[2].interested[0]: not a handle (letters, digits, - _ . ; at most 100)',
      'bounties[2].canceled_on: not an ISO 8601 date-time (e.g. 2026-03-01T12:00:00Z)',
      'bounties[2].raw_data: longer than 100000 characters as JSON',
      'bounties[2].privacy_preferences: not a JSON object',
      'bounties[2].fulfillments[0].fulfiller_github_username: not a handle (letters, digits, - _ . ; at most 100)',
      'bounties[2].fulfillments[1]: not a JSON object',
    ].sort());
    const [one] = (await t.app.inject('/api/v0.1/bounties/?pk=1')).json();
    expect(one).toMatchObject({ interested: ['Dev1'], fulfillments: [{ fulfiller_github_username: 'Dev2', note: 'kept' }], network: null, balance: null });
    const [two] = (await t.app.inject('/api/v0.1/bounties/?pk=2')).json();
    expect(two).toMatchObject({ interested: null, fulfillments: null, raw_data: null, canceled_on: null, accepted: null, standard_bounties_id: null });
    const people = () => t.ctx.database.db.selectFrom('bounty_people').select(['bounty_id', 'role', 'username_key']).orderBy('role').execute();
    expect(await people()).toEqual([
      { bounty_id: 1, role: 'fulfiller', username_key: 'dev2' },
      { bounty_id: 1, role: 'interested', username_key: 'dev1' },
    ]);
    await importOk(t.ctx, { bounties: [{ ...good, id: 1, interested: ['dev9'] }] });
    expect(await people()).toEqual([{ bounty_id: 1, role: 'interested', username_key: 'dev9' }]);
  });
});
