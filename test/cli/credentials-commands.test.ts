/** `stampgate credentials issue`: credentials from the development issuer, and the refusals of bad usage. */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { getAddress, type Hex } from 'viem';
import { describe, expect, it } from 'vitest';
import { credentialDigest, verifyCredentialProof } from '../../src/scoring/stamps/credentials.js';
import { DEV_ISSUER_KEY_FILE, issuerDidFromPrivateKey, type StampCredential } from '../../src/scoring/stamps/dev-issuer.js';
import { runCli } from '../helpers/cli.js';
import { databaseKinds } from '../helpers/databases.js';
import { alice, day, hour, minute, scoringCommandsFixture, second } from './scoring-commands-fixture.js';

describe.each(databaseKinds)('stampgate scoring commands on %s', (kind) => {
  const cli = scoringCommandsFixture(kind);
  const { devKey, writeJson, issueWithCli, listed } = cli;

  describe('credentials issue', () => {
    it('prints a credential from the development issuer that verifies, without storing it', async () => {
      const before = Date.now();
      const credential = await issueWithCli(['--address', getAddress(alice), '--provider', 'Google']);
      const after = Date.now();

      // The key was created in DATA_DIR and the credential is signed by it.
      const key = readFileSync(join(cli.dataDir, DEV_ISSUER_KEY_FILE), 'utf8').trim() as Hex;
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
      const human = await runCli(['stamps', 'list', '--address', alice], cli.env);
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
      const run = await runCli(['credentials', 'issue', '--address', getAddress(alice), '--provider', 'Google', '--import'], cli.env);
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
          issuance_date: new Date(printed.issuanceDate).toISOString(),
          expiration_date: new Date(printed.expirationDate).toISOString(),
          state: 'live',
        },
      ]);

      const withJson = await runCli(['credentials', 'issue', '--address', alice, '--provider', 'Github', '--import', '--json'], cli.env);
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
      const first = await runCli(['credentials', 'issue', '--address', alice, '--provider', 'Google'], cli.env);
      const file = writeJson('one.json', [JSON.parse(first.out)]);
      expect((await runCli(['stamps', 'import', file], cli.env)).out).toBe('1 stored, 0 already stored, 0 rejected.');
      expect((await runCli(['stamps', 'import', file], cli.env)).out).toBe('0 stored, 1 already stored, 0 rejected.');
      expect(await listed(alice)).toHaveLength(1);
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
      const run = await runCli(['credentials', 'issue', ...args], cli.env);
      expect(run.code).toBe(2);
      expect(run.err).toMatch(message);
      expect(run.out).toBe('');
      // Refused before anything was opened or created.
      expect(existsSync(join(cli.dataDir, DEV_ISSUER_KEY_FILE))).toBe(false);
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
