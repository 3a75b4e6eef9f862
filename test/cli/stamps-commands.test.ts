/** `stampgate stamps import` and `stamps revoke`. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { getAddress, type Hex } from 'viem';
import { describe, expect, it } from 'vitest';
import { credentialDigest } from '../../src/scoring/stamps/credentials.js';
import { issueCredential } from '../../src/scoring/stamps/dev-issuer.js';
import { runCli } from '../helpers/cli.js';
import { databaseKinds } from '../helpers/databases.js';
import { hostileCredential } from '../helpers/hostile-credentials.js';
import { alice, bob, day, type Json, scoringCommandsFixture, STRANGER_KEY } from './scoring-commands-fixture.js';

describe.each(databaseKinds)('stampgate scoring commands on %s', (kind) => {
  const cli = scoringCommandsFixture(kind);
  const { devKey, writeJson, listed } = cli;

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

      const run = await runCli(['stamps', 'import', file, '--json'], cli.env);
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
      const human = await runCli(['stamps', 'import', file], cli.env);
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
      const run = await runCli(['stamps', 'import', mixed], cli.env);
      expect(run.code).toBe(0);
      expect(run.out.split('\n')).toEqual(['rejected [0]: the EIP-712 types in the proof are not the stamp schema', '1 stored, 0 already stored, 1 rejected.']);
      const tooMany = writeJson('three.json', [make('Github'), make('Discord'), make('Linkedin')]);
      const whole = await runCli(['stamps', 'import', tooMany], { ...cli.env, MAX_STAMPS_PER_REQUEST: '2' });
      expect(whole.code).toBe(0);
      expect(whole.out.split('\n').at(-1)).toBe('3 stored, 0 already stored, 0 rejected.');
      expect(await listed(alice)).toHaveLength(4);
    });

    it('exits 1 with a clear message for a missing file', async () => {
      const missing = join(cli.dataDir, 'nope.json');
      const run = await runCli(['stamps', 'import', missing], cli.env);
      expect(run.code).toBe(1);
      expect(run.err).toBe(`error: Cannot read ${missing}: ENOENT.`);
      expect(run.out).toBe('');
    });

    it('exits 1 with a clear message for a file that is not JSON', async () => {
      const file = join(cli.dataDir, 'broken.json');
      writeFileSync(file, '[{"issuer": "did:ethr:0x…",');
      const run = await runCli(['stamps', 'import', file], cli.env);
      expect(run.code).toBe(1);
      expect(run.err).toMatch(new RegExp(`^error: ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is not valid JSON: .+\\.$`));
      expect(run.out).toBe('');
    });

    it('requires the file argument (usage error, exit 2)', async () => {
      const run = await runCli(['stamps', 'import'], cli.env);
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
      expect((await runCli(['stamps', 'import', file], cli.env)).out).toBe('3 stored, 0 already stored, 0 rejected.');

      const revoke = await runCli(['stamps', 'revoke', '--address', getAddress(alice), '--provider', 'Google', '--json'], cli.env);
      expect(revoke.code).toBe(0);
      expect(revoke.json()).toEqual({ revoked: 1 });
      expect(Object.fromEntries((await listed(alice)).map((s) => [s.provider, s.state]))).toEqual({ Google: 'revoked', Github: 'live' });
      expect((await listed(bob)).map((s) => s.state)).toEqual(['live']);
      const human = await runCli(['stamps', 'list', '--address', alice], cli.env);
      expect(human.out.split('\n')).toEqual(
        expect.arrayContaining([expect.stringMatching(new RegExp(`^\\d+\\tGoogle\\trevoked\\texpires .*\\t${credentialDigest(google)}$`))]),
      );

      const reimport = await runCli(['stamps', 'import', file, '--json'], cli.env);
      expect(reimport.code).toBe(0);
      expect(reimport.json()).toMatchObject({ stored: 0, unchanged: 2, rejected: 1 });
      expect(reimport.json().results[0]).toMatchObject({ index: '0', status: 'rejected', reason: expect.stringMatching(/revoked/) });

      // By digest, in human form.
      const byDigest = await runCli(['stamps', 'revoke', '--digest', credentialDigest(bobs)], cli.env);
      expect(byDigest.code).toBe(0);
      expect(byDigest.out).toBe('Revoked 1 stamp(s).');
      expect((await listed(bob)).map((s) => s.state)).toEqual(['revoked']);
      // By address: only what is still live is counted.
      expect((await runCli(['stamps', 'revoke', '--address', alice, '--json'], cli.env)).json()).toEqual({ revoked: 1 });
      expect((await listed(alice)).map((s) => s.state)).toEqual(['revoked', 'revoked']);
    });

    it('refuses to revoke without naming stamps (exit 1) and leaves everything live', async () => {
      await runCli(['credentials', 'issue', '--address', alice, '--provider', 'Google', '--import'], cli.env);
      for (const args of [[], ['--provider', 'Google']]) {
        const run = await runCli(['stamps', 'revoke', ...args], cli.env);
        expect(run.code).toBe(1);
        expect(run.err).toMatch(/^error: Name the stamps to revoke with a digest or an address/);
      }
      const badAddress = await runCli(['stamps', 'revoke', '--address', '0x1234'], cli.env);
      expect(badAddress.code).toBe(2);
      expect(badAddress.err).toMatch(/"0x1234" is not 0x followed by 40 hexadecimal digits/);
      expect((await listed(alice)).map((s) => s.state)).toEqual(['live']);
    });
  });
});
