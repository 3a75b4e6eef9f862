import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getAddress, type Hex } from 'viem';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { credentialDigest, verifyCredentialProof } from '../../src/scoring/stamps/credentials.js';
import {
  DEV_ISSUER_KEY_FILE,
  issueCredential,
  issuerDidFromPrivateKey,
  loadOrCreateIssuerKey,
  type StampCredential,
} from '../../src/scoring/stamps/dev-issuer.js';
import { runCli } from '../helpers/cli.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from '../helpers/databases.js';
import { hostileCredential } from '../helpers/hostile-credentials.js';
import { testWallet } from '../helpers/stamps.js';

type Json = Record<string, any>;

const second = 1000;
const minute = 60 * second;
const hour = 60 * minute;
const day = 24 * hour;
const STRANGER_KEY: Hex = '0x8da4ef21b864d2cc526dbdb2a120bd2874c36c9d0a1fb7f8c63d7f7a8b41de8f';
const PARTNER = 'did:ethr:0x018d103c154748e8d5a1d7658185125175457f84';
const alice = testWallet(301).address;
const bob = testWallet(302).address;

describe.each(databaseKinds)('stampgate scoring commands on %s', (kind) => {
  let test: TestDatabase;
  let dataDir: string;
  let env: Record<string, string>;

  beforeEach(async () => {
    test = await createTestDatabase(kind);
    dataDir = mkdtempSync(join(tmpdir(), 'stampgate-cli-'));
    env = { DATABASE_URL: test.url, DATA_DIR: dataDir, STAMPGATE_ENV: 'development' };
  });
  afterEach(async () => {
    await test.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** The development issuer the CLI uses: the key in DATA_DIR (created here first if need be). */
  async function devKey(): Promise<Hex> {
    return loadOrCreateIssuerKey(dataDir);
  }

  function writeJson(name: string, value: unknown): string {
    const file = join(dataDir, name);
    writeFileSync(file, JSON.stringify(value, null, 2));
    return file;
  }

  async function issueWithCli(args: string[]): Promise<StampCredential> {
    const run = await runCli(['credentials', 'issue', ...args], env);
    expect(run.err).toBe('');
    expect(run.code).toBe(0);
    return run.json<StampCredential>();
  }

  async function listed(address: string): Promise<Json[]> {
    const run = await runCli(['stamps', 'list', '--address', address, '--json'], env);
    expect(run.code).toBe(0);
    return run.json<Json[]>();
  }

  describe('credentials issue', () => {
    it('prints a credential from the development issuer that verifies, without storing it', async () => {
      const before = Date.now();
      const credential = await issueWithCli(['--address', getAddress(alice), '--provider', 'Google']);
      const after = Date.now();

      // The key was created in DATA_DIR and the credential is signed by it.
      const key = readFileSync(join(dataDir, DEV_ISSUER_KEY_FILE), 'utf8').trim() as Hex;
      expect(credential.issuer).toBe(issuerDidFromPrivateKey(key));
      const proof = verifyCredentialProof(credential);
      expect(proof).toMatchObject({
        ok: true,
        credential: { issuer: issuerDidFromPrivateKey(key), subjectAddress: alice, provider: 'Google' },
      });
      expect(credential.credentialSubject.id).toBe(`did:pkh:eip155:1:${alice}`);
      expect(credential.credentialSubject.nullifiers).toEqual([expect.stringMatching(new RegExp(`^v0:Google:${alice}:[0-9a-f]{64}$`))]);
      // Default validity: 90 days.
      const issued = Date.parse(credential.issuanceDate);
      expect(issued).toBeGreaterThanOrEqual(Math.floor(before / second) * second);
      expect(issued).toBeLessThanOrEqual(after);
      expect(Date.parse(credential.expirationDate) - issued).toBe(90 * day);

      // Printing is all it does.
      expect(await listed(alice)).toEqual([]);
      const human = await runCli(['stamps', 'list', '--address', alice], env);
      expect(human.out).toBe('No stamps.');
    });

    it('keeps using the same development key from one run to the next', async () => {
      const first = await issueWithCli(['--address', alice, '--provider', 'Google']);
      const again = await issueWithCli(['--address', alice, '--provider', 'Google']);
      expect(again.issuer).toBe(first.issuer);
      expect(again.credentialSubject.nullifiers).toEqual(first.credentialSubject.nullifiers);
      expect(first.issuer).toBe(issuerDidFromPrivateKey(await devKey()));
    });

    it.each([
      ['7d', 7 * day],
      ['12h', 12 * hour],
      ['30m', 30 * minute],
      ['90s', 90 * second],
    ])('--expires-in %s sets expirationDate to now + %i ms', async (text, ms) => {
      const before = Date.now();
      const credential = await issueWithCli(['--address', alice, '--provider', 'Google', '--expires-in', text]);
      const after = Date.now();
      const expires = Date.parse(credential.expirationDate);
      // Dates are whole seconds, so "now" may have been truncated by up to a second.
      expect(expires).toBeGreaterThanOrEqual(Math.floor((before + ms) / second) * second);
      expect(expires).toBeLessThanOrEqual(after + ms);
      expect(expires - Date.parse(credential.issuanceDate)).toBe(ms);
      expect(verifyCredentialProof(credential).ok).toBe(true);
    });

    it.each([
      [['--nullifier', 'a', '--nullifier', 'b'], ['a', 'b']],
      [['--nullifier', 'a', 'b'], ['a', 'b']],
      [['--nullifier=a', '--nullifier=b', '--nullifier', 'c'], ['a', 'b', 'c']],
      [['--nullifier', 'only'], ['only']],
    ])('%j collects the nullifiers %j (commander variadic option, repeatable)', async (args, nullifiers) => {
      const credential = await issueWithCli(['--address', alice, ...args, '--provider', 'Google']);
      expect(credential.credentialSubject.nullifiers).toEqual(nullifiers);
      expect(credential.credentialSubject.provider).toBe('Google');
      expect(verifyCredentialProof(credential)).toMatchObject({ ok: true, credential: { nullifiers } });
    });

    it('--import stores it: stamps list shows it live', async () => {
      const run = await runCli(['credentials', 'issue', '--address', getAddress(alice), '--provider', 'Google', '--import'], env);
      expect(run.code).toBe(0);
      expect(run.out).toMatch(new RegExp(`Stored for ${alice} \\(stored\\)\\.$`));
      const printed = JSON.parse(run.out.slice(0, run.out.lastIndexOf('\n'))) as StampCredential;
      expect(verifyCredentialProof(printed).ok).toBe(true);

      const stamps = await listed(getAddress(alice));
      expect(stamps).toEqual([
        {
          id: expect.any(Number),
          provider: 'Google',
          issuer: printed.issuer,
          digest: credentialDigest(printed),
          issuanceDate: new Date(printed.issuanceDate).toISOString(),
          expirationDate: new Date(printed.expirationDate).toISOString(),
          state: 'live',
        },
      ]);

      const withJson = await runCli(['credentials', 'issue', '--address', alice, '--provider', 'Github', '--import', '--json'], env);
      expect(withJson.code).toBe(0);
      const { credential, outcome } = withJson.json();
      expect(outcome).toEqual({ index: '0', status: 'stored', provider: 'Github', address: alice });
      expect(verifyCredentialProof(credential).ok).toBe(true);
      expect((await listed(alice)).map((s) => [s.provider, s.state]).sort()).toEqual([
        ['Github', 'live'],
        ['Google', 'live'],
      ]);
    });

    it('a printed credential imports with `stamps import`, once', async () => {
      const first = await runCli(['credentials', 'issue', '--address', alice, '--provider', 'Google'], env);
      const file = writeJson('one.json', [JSON.parse(first.out)]);
      expect((await runCli(['stamps', 'import', file], env)).out).toBe('1 stored, 0 already stored, 0 rejected.');
      expect((await runCli(['stamps', 'import', file], env)).out).toBe('0 stored, 1 already stored, 0 rejected.');
      expect(await listed(alice)).toHaveLength(1);
    });
  });

  describe('stamps import', () => {
    it('reports the rejected indexes of a mixed file, stores the rest, and exits 0', async () => {
      const key = await devKey();
      const now = Date.now();
      const make = (address: string, provider: string, privateKey: Hex = key) =>
        issueCredential({ privateKey, address, provider, expiresAt: new Date(now + 30 * day) });
      const tampered = structuredClone(make(alice, 'Github')) as Json;
      tampered.credentialSubject.provider = 'Google';
      const good = [make(alice, 'Google'), make(bob, 'Google')];
      const file = writeJson('mixed.json', [
        good[0],
        tampered,
        make(alice, 'Twitter', STRANGER_KEY),
        'not a credential',
        { address: bob, credentials: [make(alice, 'Discord'), good[1]] },
        { credentials: [make(alice, 'Ens')] },
      ]);

      const run = await runCli(['stamps', 'import', file, '--json'], env);
      expect(run.code).toBe(0);
      const report = run.json();
      expect(report).toMatchObject({ stored: 2, unchanged: 0, rejected: 5 });
      expect(report.results).toEqual([
        { index: '0', status: 'stored', provider: 'Google', address: alice },
        { index: '1', status: 'rejected', reason: 'proof signature does not match the issuer' },
        { index: '2', status: 'rejected', reason: 'issuer is not trusted', provider: 'Twitter' },
        { index: '3', status: 'rejected', reason: expect.stringMatching(/not a JSON object/) },
        { index: '4.credentials[0]', status: 'rejected', reason: 'credential subject is a different address', provider: 'Discord' },
        { index: '4.credentials[1]', status: 'stored', provider: 'Google', address: bob },
        { index: '5', status: 'rejected', reason: expect.stringMatching(/address/) },
      ]);
      expect((await listed(alice)).map((s) => [s.provider, s.digest, s.state])).toEqual([['Google', credentialDigest(good[0]), 'live']]);
      expect((await listed(bob)).map((s) => [s.provider, s.digest, s.state])).toEqual([['Google', credentialDigest(good[1]), 'live']]);

      // The human report of the same file: one line per rejection, then the totals.
      const human = await runCli(['stamps', 'import', file], env);
      expect(human.code).toBe(0);
      expect(human.out.split('\n')).toEqual([
        'rejected [1]: proof signature does not match the issuer',
        'rejected [2] Twitter: issuer is not trusted',
        expect.stringMatching(/^rejected \[3\]: .*not a JSON object/),
        'rejected [4.credentials[0]] Discord: credential subject is a different address',
        expect.stringMatching(/^rejected \[5\]: .*address/),
        '0 stored, 2 already stored, 5 rejected.',
      ]);
      expect(await listed(alice)).toHaveLength(1);
    });

    it('applies the intake limits: a hostile schema is rejected by index; a file longer than MAX_STAMPS_PER_REQUEST is imported whole', async () => {
      const key = await devKey();
      const make = (provider: string) => issueCredential({ privateKey: key, address: alice, provider, expiresAt: new Date(Date.now() + day) });
      const hostile = hostileCredential(make('Ens') as unknown as Json, 40, 10);
      const mixed = writeJson('hostile.json', [hostile, make('Google')]);
      const run = await runCli(['stamps', 'import', mixed], env);
      expect(run.code).toBe(0);
      expect(run.out.split('\n')).toEqual(['rejected [0]: the EIP-712 types in the proof are not the stamp schema', '1 stored, 0 already stored, 1 rejected.']);
      const tooMany = writeJson('three.json', [make('Github'), make('Discord'), make('Linkedin')]);
      const whole = await runCli(['stamps', 'import', tooMany], { ...env, MAX_STAMPS_PER_REQUEST: '2' });
      expect(whole.code).toBe(0);
      expect(whole.out.split('\n').at(-1)).toBe('3 stored, 0 already stored, 0 rejected.');
      expect(await listed(alice)).toHaveLength(4);
    });

    it('exits 1 with a clear message for a missing file', async () => {
      const missing = join(dataDir, 'nope.json');
      const run = await runCli(['stamps', 'import', missing], env);
      expect(run.code).toBe(1);
      expect(run.err).toBe(`error: Cannot read ${missing}: ENOENT.`);
      expect(run.out).toBe('');
    });

    it('exits 1 with a clear message for a file that is not JSON', async () => {
      const file = join(dataDir, 'broken.json');
      writeFileSync(file, '[{"issuer": "did:ethr:0x…",');
      const run = await runCli(['stamps', 'import', file], env);
      expect(run.code).toBe(1);
      expect(run.err).toMatch(new RegExp(`^error: ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is not valid JSON: .+\\.$`));
      expect(run.out).toBe('');
    });

    it('requires the file argument (usage error, exit 2)', async () => {
      const run = await runCli(['stamps', 'import'], env);
      expect(run.code).toBe(2);
      expect(run.err).toMatch(/missing required argument 'file'/);
    });
  });

  describe('stamps revoke', () => {
    it('revokes by address and provider; list shows it revoked; it cannot be imported again', async () => {
      const key = await devKey();
      const expiresAt = new Date(Date.now() + 30 * day);
      const google = issueCredential({ privateKey: key, address: alice, provider: 'Google', expiresAt });
      const github = issueCredential({ privateKey: key, address: alice, provider: 'Github', expiresAt });
      const bobs = issueCredential({ privateKey: key, address: bob, provider: 'Google', expiresAt });
      const file = writeJson('stamps.json', [google, github, bobs]);
      expect((await runCli(['stamps', 'import', file], env)).out).toBe('3 stored, 0 already stored, 0 rejected.');

      const revoke = await runCli(['stamps', 'revoke', '--address', getAddress(alice), '--provider', 'Google', '--json'], env);
      expect(revoke.code).toBe(0);
      expect(revoke.json()).toEqual({ revoked: 1 });
      expect(Object.fromEntries((await listed(alice)).map((s) => [s.provider, s.state]))).toEqual({ Google: 'revoked', Github: 'live' });
      expect((await listed(bob)).map((s) => s.state)).toEqual(['live']);
      const human = await runCli(['stamps', 'list', '--address', alice], env);
      expect(human.out.split('\n')).toEqual(
        expect.arrayContaining([expect.stringMatching(new RegExp(`^\\d+\\tGoogle\\trevoked\\texpires .*\\t${credentialDigest(google)}$`))]),
      );

      const reimport = await runCli(['stamps', 'import', file, '--json'], env);
      expect(reimport.code).toBe(0);
      expect(reimport.json()).toMatchObject({ stored: 0, unchanged: 2, rejected: 1 });
      expect(reimport.json().results[0]).toMatchObject({ index: '0', status: 'rejected', reason: expect.stringMatching(/revoked/) });

      // By digest, in human form.
      const byDigest = await runCli(['stamps', 'revoke', '--digest', credentialDigest(bobs)], env);
      expect(byDigest.code).toBe(0);
      expect(byDigest.out).toBe('Revoked 1 stamp(s).');
      expect((await listed(bob)).map((s) => s.state)).toEqual(['revoked']);
      // By address: only what is still live is counted.
      expect((await runCli(['stamps', 'revoke', '--address', alice, '--json'], env)).json()).toEqual({ revoked: 1 });
      expect((await listed(alice)).map((s) => s.state)).toEqual(['revoked', 'revoked']);
    });

    it('refuses to revoke without naming stamps (exit 1) and leaves everything live', async () => {
      await runCli(['credentials', 'issue', '--address', alice, '--provider', 'Google', '--import'], env);
      for (const args of [[], ['--provider', 'Google']]) {
        const run = await runCli(['stamps', 'revoke', ...args], env);
        expect(run.code).toBe(1);
        expect(run.err).toMatch(/^error: Name the stamps to revoke with a digest or an address/);
      }
      const badAddress = await runCli(['stamps', 'revoke', '--address', '0x1234'], env);
      expect(badAddress.code).toBe(2);
      expect(badAddress.err).toMatch(/"0x1234" is not 0x followed by 40 hexadecimal digits/);
      expect((await listed(alice)).map((s) => s.state)).toEqual(['live']);
    });
  });

  describe('issuers', () => {
    it('adds (normalised), lists, refuses a duplicate, and removes', async () => {
      const devIssuer = issuerDidFromPrivateKey(await devKey());
      const shouted = PARTNER.toUpperCase().replace('0X', '0x');

      const add = await runCli(['issuers', 'add', shouted, '--note', 'partner IAM', '--json'], env);
      expect(add.code).toBe(0);
      expect(add.json()).toEqual({ did: PARTNER, source: 'database', note: 'partner IAM' });

      const list = await runCli(['issuers', 'list', '--json'], env);
      expect(list.json()).toEqual(
        expect.arrayContaining([
          { did: devIssuer, source: 'development', note: '' },
          { did: PARTNER, source: 'database', note: 'partner IAM' },
        ]),
      );
      expect(list.json()).toHaveLength(2);
      const human = await runCli(['issuers', 'list'], env);
      expect(human.out.split('\n').sort()).toEqual([`${devIssuer}\tdevelopment`, `${PARTNER}\tdatabase\tpartner IAM`].sort());

      const duplicate = await runCli(['issuers', 'add', PARTNER], env);
      expect(duplicate.code).toBe(1);
      expect(duplicate.err).toBe(`error: ${PARTNER} is already trusted.`);

      const remove = await runCli(['issuers', 'remove', shouted], env);
      expect(remove.code).toBe(0);
      expect(remove.out).toBe(`No longer trusting ${PARTNER}.`);
      expect((await runCli(['issuers', 'list', '--json'], env)).json()).toEqual([{ did: devIssuer, source: 'development', note: '' }]);

      const again = await runCli(['issuers', 'remove', PARTNER], env);
      expect(again.code).toBe(1);
      expect(again.err).toMatch(/is not in the database list of trusted issuers\.$/);
    });

    it('explains why a configured or development issuer cannot be removed', async () => {
      const devIssuer = issuerDidFromPrivateKey(await devKey());
      const configured = { ...env, TRUSTED_ISSUERS: PARTNER };
      for (const did of [PARTNER, devIssuer]) {
        const run = await runCli(['issuers', 'remove', did], configured);
        expect(run.code).toBe(1);
        expect(run.err).toMatch(/It is trusted by configuration \(TRUSTED_ISSUERS or development\), not by the database\./);
      }
      expect((await runCli(['issuers', 'list', '--json'], configured)).json()).toEqual(
        expect.arrayContaining([
          { did: PARTNER, source: 'configuration', note: '' },
          { did: devIssuer, source: 'development', note: '' },
        ]),
      );
    });

    it('refuses a malformed DID (exit 1)', async () => {
      for (const command of ['add', 'remove']) {
        const run = await runCli(['issuers', command, 'did:ethr:0x1234'], env);
        expect(run.code).toBe(1);
        expect(run.err).toBe('error: "did:ethr:0x1234" is not an issuer DID of the form did:ethr:0x<40 hex digits>.');
      }
    });

    it('a stamp from an added issuer is stored; after removal it is refused', async () => {
      const expiresAt = new Date(Date.now() + 30 * day);
      const stamp = (provider: string) => issueCredential({ privateKey: STRANGER_KEY, address: alice, provider, expiresAt });
      const stranger = issuerDidFromPrivateKey(STRANGER_KEY);
      const importOne = async (provider: string) =>
        (await runCli(['stamps', 'import', writeJson(`${provider}.json`, [stamp(provider)]), '--json'], env)).json().results[0];

      expect(await importOne('Google')).toMatchObject({ status: 'rejected', reason: 'issuer is not trusted' });
      expect((await runCli(['issuers', 'add', stranger], env)).code).toBe(0);
      expect(await importOne('Github')).toMatchObject({ status: 'stored' });
      expect((await runCli(['issuers', 'remove', stranger], env)).code).toBe(0);
      expect(await importOne('Twitter')).toMatchObject({ status: 'rejected', reason: 'issuer is not trusted' });
    });
  });

  describe('in production', () => {
    it('credentials issue exits 1 saying the development issuer is off, and creates no key', async () => {
      const production = { ...env, STAMPGATE_ENV: 'production' };
      const run = await runCli(['credentials', 'issue', '--address', alice, '--provider', 'Google', '--import'], production);
      expect(run.code).toBe(1);
      expect(run.err).toBe('error: The development issuer is off in production (STAMPGATE_ENV=production).');
      expect(run.out).toBe('');
      expect(existsSync(join(dataDir, DEV_ISSUER_KEY_FILE))).toBe(false);
      expect((await runCli(['stamps', 'list', '--address', alice, '--json'], production)).json()).toEqual([]);
    });

    it("rejects the development issuer's credentials on import", async () => {
      const credential = issueCredential({
        privateKey: await devKey(),
        address: alice,
        provider: 'Google',
        expiresAt: new Date(Date.now() + 30 * day),
      });
      const production = { ...env, STAMPGATE_ENV: 'production' };
      const run = await runCli(['stamps', 'import', writeJson('dev.json', [credential]), '--json'], production);
      expect(run.code).toBe(0);
      expect(run.json()).toMatchObject({ stored: 0, rejected: 1, results: [{ index: '0', reason: 'issuer is not trusted' }] });
      expect((await runCli(['issuers', 'list', '--json'], production)).json()).toEqual([]);
    });
  });

  describe('usage errors exit 2 with a clear message', () => {
    it.each([
      [['--address', '0x1234', '--provider', 'Google'], /"0x1234" is not 0x followed by 40 hexadecimal digits/],
      [['--address', `${alice}00`, '--provider', 'Google'], /is not 0x followed by 40 hexadecimal digits/],
      [['--address', alice.slice(2), '--provider', 'Google'], /is not 0x followed by 40 hexadecimal digits/],
      [['--address', alice, '--provider', 'Google', '--expires-in', '90x'], /"90x" is not a duration from 1s to 3650d, such as 90d, 12h or 30m/],
      [['--address', alice, '--provider', 'Google', '--expires-in', '0d'], /"0d" is not a duration from 1s to 3650d, such as 90d, 12h or 30m/],
      [['--address', alice, '--provider', 'Google', '--expires-in', '-5d'], /"-5d" is not a duration/],
      [['--address', alice, '--provider', 'Google', '--expires-in', '1.5d'], /"1\.5d" is not a duration/],
      [['--address', alice], /required option '--provider <provider>' not specified/],
      [['--provider', 'Google'], /required option '--address <address>' not specified/],
      [['--address', alice, '--provider', 'Google', '--nullifier'], /option '--nullifier <value\.\.\.>' argument missing/],
    ])('credentials issue %j', async (args, message) => {
      const run = await runCli(['credentials', 'issue', ...args], env);
      expect(run.code).toBe(2);
      expect(run.err).toMatch(message);
      expect(run.out).toBe('');
      // Refused before anything was opened or created.
      expect(existsSync(join(dataDir, DEV_ISSUER_KEY_FILE))).toBe(false);
    });
  });
});

describe('credentials issue limits', () => {
  it.each([['3651d'], ['999999999999d']])('refuses --expires-in %s with exit 2', async (value) => {
    const run = await runCli(['credentials', 'issue', '--address', '0x' + '1'.repeat(40), '--provider', 'Google', '--expires-in', value], {
      STAMPGATE_ENV: 'production',
      DATABASE_URL: 'sqlite::memory:',
    });
    expect(run.code).toBe(2);
    expect(run.err).toContain('is not a duration from 1s to 3650d');
  });
});
