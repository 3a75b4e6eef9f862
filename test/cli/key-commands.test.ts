import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from '../helpers/databases.js';

describe.each(databaseKinds)('stampgate keys permissions on %s', (kind) => {
  let test: TestDatabase;
  let env: Record<string, string>;
  let accountId: number;
  beforeEach(async () => {
    test = await createTestDatabase(kind);
    env = { DATABASE_URL: test.url, STAMPGATE_ENV: 'production' };
    accountId = (await runCli(['accounts', 'create', '--name', 'Keys Lab', '--json'], env)).json().id;
  });
  afterEach(async () => test.drop());

  const create = (...args: string[]) => runCli(['keys', 'create', '--account', String(accountId), ...args], env);

  it('creates a key with chosen permissions, shows it, and edits them (set, add, remove)', async () => {
    const created = await create('--permissions', 'read_scores,historical_endpoint', '--json');
    expect(created.code).toBe(0);
    const prefix: string = created.json().prefix;
    expect(created.json()).toMatchObject({ account_id: accountId, permissions: ['read_scores', 'historical_endpoint'] });

    const shown = await runCli(['keys', 'show', prefix, '--json'], env);
    expect(shown.code).toBe(0);
    expect(shown.json()).toMatchObject({ prefix, account_id: accountId, tier: 1, permissions: ['read_scores', 'historical_endpoint'], revoked_at: null });
    expect(shown.out).not.toContain(created.json().key);
    const human = await runCli(['keys', 'show', prefix], env);
    expect(human.out).toContain(`API key ${prefix}`);
    expect(human.out).toMatch(/permissions\s+read_scores,historical_endpoint/);

    const added = await runCli(['keys', 'permissions', prefix, '--add', 'submit_passports', '--remove', 'historical_endpoint', '--json'], env);
    expect(added.code).toBe(0);
    expect(added.json().permissions).toEqual(['submit_passports', 'read_scores']);

    const set = await runCli(['keys', 'permissions', prefix, '--set', 'create_scorers'], env);
    expect(set.out).toBe(`API key ${prefix} permissions: create_scorers.`);
    const none = await runCli(['keys', 'permissions', prefix, '--set', ''], env);
    expect(none.out).toBe(`API key ${prefix} permissions: none.`);
    // Without a change option the command only shows the current permissions.
    expect((await runCli(['keys', 'permissions', prefix, '--json'], env)).json().permissions).toEqual([]);
    expect((await runCli(['keys', 'list'], env)).out).toContain(`${prefix}\taccount ${accountId}\tdefault\ttier 1\tnone\tactive`);
  });

  it('gives a plain key every permission but historical_endpoint, and keeps --no-submit / --no-read working', async () => {
    expect((await create('--json')).json().permissions).toEqual(['submit_passports', 'read_scores', 'create_scorers']);
    expect((await create('--no-submit', '--json')).json().permissions).toEqual(['read_scores', 'create_scorers']);
    expect((await create('--no-read', '--json')).json().permissions).toEqual(['submit_passports', 'create_scorers']);
    const human = await create('--permissions', 'submit_passports');
    expect(human.out).toMatch(/^Created API key [a-z0-9]{8} \(tier 1; submit_passports\)\./);
  });

  it('refuses unknown permission names and clashing options with exit 2, changing nothing', async () => {
    const unknown = await create('--permissions', 'read_scores,admin,everything');
    expect(unknown.code).toBe(2);
    expect(unknown.err).toContain('Unknown permissions "admin", "everything"; use submit_passports, read_scores, create_scorers, historical_endpoint.');
    const clash = await create('--permissions', 'read_scores', '--no-read');
    expect(clash.code).toBe(2);
    expect(clash.err).toContain("option '--no-read' cannot be used with option '--permissions <list>'");
    expect((await runCli(['keys', 'list', '--json'], env)).json()).toEqual([]);

    const prefix: string = (await create('--json')).json().prefix;
    for (const args of [
      ['--add', 'read-scores'],
      ['--remove', 'historical'],
      ['--set', 'read_scores', '--add', 'create_scorers'],
      ['--set'],
    ]) {
      const run = await runCli(['keys', 'permissions', prefix, ...args], env);
      expect(run.code, args.join(' ')).toBe(2);
    }
    expect((await runCli(['keys', 'show', prefix, '--json'], env)).json().permissions).toEqual(['submit_passports', 'read_scores', 'create_scorers']);
  });

  it('refuses an unknown prefix and a revoked key with exit 1', async () => {
    const missing = await runCli(['keys', 'show', 'zzzzzzzz'], env);
    expect(missing.code).toBe(1);
    expect(missing.err).toBe('error: There is no key with prefix zzzzzzzz.');
    expect((await runCli(['keys', 'permissions', 'zzzzzzzz', '--add', 'read_scores'], env)).code).toBe(1);

    const prefix: string = (await create('--json')).json().prefix;
    expect((await runCli(['keys', 'revoke', prefix], env)).code).toBe(0);
    const edit = await runCli(['keys', 'permissions', prefix, '--add', 'historical_endpoint'], env);
    expect(edit.code).toBe(1);
    expect(edit.err).toContain('revoked');
    const shown = await runCli(['keys', 'show', prefix, '--json'], env);
    expect(shown.json().revoked_at).not.toBeNull();
    expect(shown.json().permissions).toEqual(['submit_passports', 'read_scores', 'create_scorers']);
  });
});
