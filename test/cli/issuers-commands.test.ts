/** `stampgate issuers` (trusted issuers kept in the database), and the development issuer in production. */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEV_ISSUER_KEY_FILE, issueCredential, issuerDidFromPrivateKey } from '../../src/scoring/stamps/dev-issuer.js';
import { runCli } from '../helpers/cli.js';
import { databaseKinds } from '../helpers/databases.js';
import { alice, day, PARTNER, scoringCommandsFixture, STRANGER_KEY } from './scoring-commands-fixture.js';

describe.each(databaseKinds)('stampgate scoring commands on %s', (kind) => {
  const cli = scoringCommandsFixture(kind);
  const { devKey, writeJson } = cli;

  describe('issuers', () => {
    it('adds (normalised), lists, refuses a duplicate, and removes', async () => {
      const devIssuer = issuerDidFromPrivateKey(await devKey());
      const shouted = PARTNER.toUpperCase().replace('0X', '0x');

      const add = await runCli(['issuers', 'add', shouted, '--note', 'partner IAM', '--json'], cli.env);
      expect(add.code).toBe(0);
      expect(add.json()).toEqual({ did: PARTNER, source: 'database', note: 'partner IAM' });

      const list = await runCli(['issuers', 'list', '--json'], cli.env);
      expect(list.json()).toEqual(
        expect.arrayContaining([
          { did: devIssuer, source: 'development', note: '' },
          { did: PARTNER, source: 'database', note: 'partner IAM' },
        ]),
      );
      expect(list.json()).toHaveLength(2);
      const human = await runCli(['issuers', 'list'], cli.env);
      expect(human.out.split('\n').sort()).toEqual([`${devIssuer}\tdevelopment`, `${PARTNER}\tdatabase\tpartner IAM`].sort());

      const duplicate = await runCli(['issuers', 'add', PARTNER], cli.env);
      expect(duplicate.code).toBe(1);
      expect(duplicate.err).toBe(`error: ${PARTNER} is already trusted.`);

      const remove = await runCli(['issuers', 'remove', shouted], cli.env);
      expect(remove.code).toBe(0);
      expect(remove.out).toBe(`No longer trusting ${PARTNER}.`);
      expect((await runCli(['issuers', 'list', '--json'], cli.env)).json()).toEqual([{ did: devIssuer, source: 'development', note: '' }]);

      const again = await runCli(['issuers', 'remove', PARTNER], cli.env);
      expect(again.code).toBe(1);
      expect(again.err).toMatch(/is not in the database list of trusted issuers\.$/);
    });

    it('explains why a configured or development issuer cannot be removed', async () => {
      const devIssuer = issuerDidFromPrivateKey(await devKey());
      const configured = { ...cli.env, TRUSTED_ISSUERS: PARTNER };
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
        const run = await runCli(['issuers', command, 'did:ethr:0x1234'], cli.env);
        expect(run.code).toBe(1);
        expect(run.err).toBe('error: "did:ethr:0x1234" is not an issuer DID of the form did:ethr:0x<40 hex digits>.');
      }
    });

    it('a stamp from an added issuer is stored; after removal it is refused', async () => {
      const expiresAt = new Date(Date.now() + 30 * day);
      const stamp = (provider: string) => issueCredential({ privateKey: STRANGER_KEY, address: alice, provider, expiresAt });
      const stranger = issuerDidFromPrivateKey(STRANGER_KEY);
      const importOne = async (provider: string) =>
        (await runCli(['stamps', 'import', writeJson(`${provider}.json`, [stamp(provider)]), '--json'], cli.env)).json().results[0];

      expect(await importOne('Google')).toMatchObject({ status: 'rejected', reason: 'issuer is not trusted' });
      expect((await runCli(['issuers', 'add', stranger], cli.env)).code).toBe(0);
      expect(await importOne('Github')).toMatchObject({ status: 'stored' });
      expect((await runCli(['issuers', 'remove', stranger], cli.env)).code).toBe(0);
      expect(await importOne('Twitter')).toMatchObject({ status: 'rejected', reason: 'issuer is not trusted' });
    });
  });

  describe('in production', () => {
    it('credentials issue exits 1 saying the development issuer is off, and creates no key', async () => {
      const production = { ...cli.env, STAMPGATE_ENV: 'production' };
      const run = await runCli(['credentials', 'issue', '--address', alice, '--provider', 'Google', '--import'], production);
      expect(run.code).toBe(1);
      expect(run.err).toBe('error: The development issuer is off in production (STAMPGATE_ENV=production).');
      expect(run.out).toBe('');
      expect(existsSync(join(cli.dataDir, DEV_ISSUER_KEY_FILE))).toBe(false);
      expect((await runCli(['stamps', 'list', '--address', alice, '--json'], production)).json()).toEqual([]);
    });

    it("rejects the development issuer's credentials on import", async () => {
      const credential = issueCredential({
        privateKey: await devKey(),
        address: alice,
        provider: 'Google',
        expiresAt: new Date(Date.now() + 30 * day),
      });
      const production = { ...cli.env, STAMPGATE_ENV: 'production' };
      const run = await runCli(['stamps', 'import', writeJson('dev.json', [credential]), '--json'], production);
      expect(run.code).toBe(0);
      expect(run.json()).toMatchObject({ stored: 0, rejected: 1, results: [{ index: '0', reason: 'issuer is not trusted' }] });
      expect((await runCli(['issuers', 'list', '--json'], production)).json()).toEqual([]);
    });
  });
});
