import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from '../helpers/databases.js';

describe.each(databaseKinds)('stampgate admin commands on %s', (kind) => {
  let test: TestDatabase;
  let env: Record<string, string>;
  beforeEach(async () => {
    test = await createTestDatabase(kind);
    env = { DATABASE_URL: test.url, STAMPGATE_ENV: 'production' };
  });
  afterEach(async () => test.drop());

  it('migrate applies the schema once', async () => {
    const first = await runCli(['migrate', '--json'], env);
    expect(first.code).toBe(0);
    expect(first.json().applied).toContain('0001-foundation');
    const second = await runCli(['migrate'], env);
    expect(second.out).toBe('The database schema is up to date.');
  });

  it('creates an account, scorers and keys, lists them, and revokes a key', async () => {
    const account = await runCli(['accounts', 'create', '--name', 'Grants Lab', '--json'], env);
    expect(account.code).toBe(0);
    const accountId = account.json().id;
    expect(account.json().name).toBe('Grants Lab');

    const scorer = await runCli(
      ['scorers', 'create', '--account', String(accountId), '--name', 'Airdrop', '--type', 'binary', '--threshold', '15.5', '--requires-signature', '--json'],
      env,
    );
    expect(scorer.code).toBe(0);
    expect(scorer.json()).toMatchObject({ account_id: accountId, type: 'binary', threshold: '15.5', requires_signature: true, weights: {} });

    const updated = await runCli(
      ['scorers', 'update', String(scorer.json().id), '--no-requires-signature', '--weight', 'Google=2.5', '--weight', 'Github=1', '--json'],
      env,
    );
    expect(updated.json()).toMatchObject({ requires_signature: false, weights: { Google: '2.5', Github: '1' }, threshold: '15.5' });

    const listed = await runCli(['scorers', 'list', '--account', String(accountId)], env);
    expect(listed.out).toContain('Airdrop\tbinary\tthreshold 15.5');

    const key = await runCli(['keys', 'create', '--account', String(accountId), '--tier', '2', '--no-read', '--json'], env);
    expect(key.code).toBe(0);
    const created = key.json();
    expect(created.key).toMatch(new RegExp(`^${created.prefix}\\.`));
    expect(created).toMatchObject({ tier: 2, permissions: ['submit_passports', 'create_scorers'] });

    const keys = await runCli(['keys', 'list'], env);
    expect(keys.out).toContain(created.prefix);
    expect(keys.out).toContain('submit_passports');
    expect(keys.out).not.toContain(created.key.split('.')[1]);

    const revoked = await runCli(['keys', 'revoke', created.prefix], env);
    expect(revoked.code).toBe(0);
    expect((await runCli(['keys', 'list', '--json'], env)).json()[0].revoked_at).not.toBeNull();
  });

  it.each([
    [['accounts', 'create'], 2, /required option '--name/],
    [['scorers', 'create', '--account', 'abc', '--name', 'x'], 2, /"abc" is not a positive whole number/],
    [['scorers', 'create', '--account', '999', '--name', 'x'], 1, /There is no account 999/],
    [['keys', 'create', '--account', '1', '--tier', '7'], 2, /"7" is not a tier/],
    [['keys', 'revoke', 'nosuchkey'], 1, /There is no key with prefix nosuchkey/],
    [['scorers', 'update', '42', '--name', 'x'], 1, /There is no scorer 42/],
    [['scorers', 'create', '--account', '1', '--name', 'x', '--weight', 'Google'], 2, /is not PROVIDER=WEIGHT/],
    [['frobnicate'], 2, /unknown command/],
  ])('refuses %j with exit %i and a clear message', async (args, code, message) => {
    const run = await runCli(args, env);
    expect(run.code).toBe(code);
    expect(run.err).toMatch(message);
  });

  it('refuses a bad scorer type and threshold from the domain rules', async () => {
    const accountId = (await runCli(['accounts', 'create', '--name', 'A', '--json'], env)).json().id;
    const badType = await runCli(['scorers', 'create', '--account', String(accountId), '--name', 'x', '--type', 'fancy'], env);
    expect(badType.code).toBe(1);
    expect(badType.err).toMatch(/Scorer type must be "weighted" or "binary"/);
    const badThreshold = await runCli(['scorers', 'create', '--account', String(accountId), '--name', 'x', '--threshold', '1e3'], env);
    expect(badThreshold.err).toMatch(/Threshold must be a non-negative decimal/);
    expect((await runCli(['scorers', 'list', '--json'], env)).json()).toEqual([]);
  });

  it('refuses bad configuration with exit 2 and names the variable', async () => {
    const run = await runCli(['accounts', 'list'], { ...env, PORT: 'abc' });
    expect(run.code).toBe(2);
    expect(run.err).toContain('PORT="abc" is not a whole number');
  });
});
