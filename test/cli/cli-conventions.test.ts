/**
 * What holds for every command: `--json` output spells its keys in snake_case, as the HTTP API
 * does (maps keyed by data, such as a scorer's weights, and the W3C credential keep theirs); the
 * help says how configuration works and shows defaults as they are typed.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from '../helpers/databases.js';
import { profileFixtures } from '../publicdata/fixtures.js';

/** Every key path whose name is not snake_case, outside the values kept verbatim. */
function notSnakeCase(value: unknown, path = '$'): string[] {
  if (value === null || typeof value !== 'object') return [];
  if (Array.isArray(value)) return value.flatMap((item, i) => notSnakeCase(item, `${path}[${i}]`));
  return Object.entries(value).flatMap(([key, field]) => [
    ...(/^[a-z0-9_]+$/.test(key) ? [] : [`${path}.${key}`]),
    ...(['weights', 'settings', 'credential'].includes(key) ? [] : notSnakeCase(field, `${path}.${key}`)),
  ]);
}

describe.each(databaseKinds)('--json output on %s', (kind) => {
  let test: TestDatabase;
  let env: Record<string, string>;
  let dir: string;
  beforeAll(async () => {
    test = await createTestDatabase(kind);
    dir = mkdtempSync(join(tmpdir(), 'stampgate-json-'));
    // Development: `credentials issue` needs the development issuer.
    env = { DATABASE_URL: test.url, DATA_DIR: dir };
  });
  afterAll(async () => {
    await test.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('uses snake_case keys in every command that has --json', async () => {
    const outputs = new Map<string, unknown>();
    const run = async (...args: string[]) => {
      const result = await runCli([...args, '--json'], env);
      expect(result.code, `${args.join(' ')}: ${result.err}`).toBe(0);
      outputs.set(args.slice(0, 2).join(' '), result.json());
      return result.json();
    };
    const address = `0x${'12'.repeat(20)}`;
    const owner = `0x${'34'.repeat(20)}`;

    await run('migrate');
    const account = await run('accounts', 'create', '--name', 'Lab', '--owner', owner);
    expect(account).toMatchObject({ owner_address: owner, created_at: expect.any(String) });
    await run('accounts', 'list');
    const scorer = await run('scorers', 'create', '--account', String(account.id), '--name', 'S', '--weight', 'Google=2', '--requires-signature');
    expect(scorer).toMatchObject({ account_id: account.id, requires_signature: true, weights: { Google: '2' } });
    await run('scorers', 'list');
    await run('scorers', 'update', String(scorer.id), '--type', 'capped', '--setting', 'platform_cap=5');
    const key = await run('keys', 'create', '--account', String(account.id));
    expect(key).toMatchObject({ account_id: account.id, revoked_at: null });
    await run('keys', 'list');
    await run('keys', 'show', key.prefix);
    await run('keys', 'permissions', key.prefix, '--add', 'historical_endpoint');
    await run('keys', 'revoke', key.prefix);
    await run('issuers', 'add', `did:ethr:0x${'56'.repeat(20)}`);
    await run('issuers', 'list');
    await run('issuers', 'remove', `did:ethr:0x${'56'.repeat(20)}`);
    const issued = await run('credentials', 'issue', '--address', address, '--provider', 'Google', '--import');
    // The credential keeps the field names of its standard.
    expect(Object.keys(issued.credential)).toEqual(expect.arrayContaining(['credentialSubject', 'issuanceDate', 'expirationDate']));
    const printed = await runCli(['credentials', 'issue', '--address', address, '--provider', 'Github'], env);
    const stampsFile = join(dir, 'stamps.json');
    writeFileSync(stampsFile, JSON.stringify([JSON.parse(printed.out), { not: 'a credential' }]));
    await run('stamps', 'import', stampsFile);
    const stamps = await run('stamps', 'list', '--address', address);
    expect(stamps[0]).toMatchObject({ issuance_date: expect.any(String), expiration_date: expect.any(String) });
    await run('stamps', 'revoke', '--address', address, '--provider', 'Github');
    const stakeFile = join(dir, 'stakes.json');
    writeFileSync(stakeFile, JSON.stringify([{ type: 'selfStake', roundId: 1 }]));
    await run('stake', 'import', stakeFile);
    const dataFile = join(dir, 'data.json');
    writeFileSync(dataFile, JSON.stringify({ profiles: [profileFixtures[0]], grants: [{ title: 'no id' }] }));
    await run('data', 'import', dataFile);
    await run('data', 'reset-key', profileFixtures[0]!.handle);

    expect(outputs.size).toBe(21);
    for (const [command, output] of outputs) expect(notSnakeCase(output), command).toEqual([]);
  });
});

describe('help texts', () => {
  const help = async (...args: string[]) => {
    const result = await runCli([...args, '--help'], {});
    expect(result.code).toBe(0);
    return result.out;
  };

  it('the top-level help says configuration is by environment variables and where they are described', async () => {
    const text = await help();
    expect(text).toContain('Configuration is by environment variables');
    expect(text).toContain('docs/configuration.md');
    expect(text).toContain('snake_case');
  });

  it('--expires-in shows its default as it is typed', async () => {
    const text = (await help('credentials', 'issue')).replace(/\s+/g, ' ');
    expect(text).toContain('(default: 90d)');
    expect(text).not.toContain('7776000000');
  });

  it('--threshold is not described as a binary scorer’s only', async () => {
    const text = (await help('scorers', 'create')).replace(/\s+/g, ' ');
    expect(text).not.toContain('of a binary scorer');
    expect(text).toContain('for every type');
  });
});
