import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Hex } from 'viem';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  DEV_ISSUER_KEY_FILE,
  issueCredential,
  issuerDidFromPrivateKey,
  loadOrCreateIssuerKey,
} from '../../../src/scoring/stamps/dev-issuer.js';
import { parseIssuerDid } from '../../../src/scoring/stamps/issuers.service.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { databaseKinds } from '../../helpers/databases.js';
import { testWallet } from '../../helpers/stamps.js';

const day = 86_400_000;
const CONFIGURED = 'did:ethr:0x018d103c154748e8d5a1d7658185125175457f84';
const PARTNER_KEY: Hex = '0x8da4ef21b864d2cc526dbdb2a120bd2874c36c9d0a1fb7f8c63d7f7a8b41de8f';
const PARTNER = issuerDidFromPrivateKey(PARTNER_KEY);
const OTHER = 'did:ethr:0x00000000000000000000000000000000000000ab';
const holder = testWallet(201).address;

/** did:ethr:0x… with the hex (and the prefix) in upper case. */
const shouting = (did: string) => did.toUpperCase().replace('0X', '0x');

function credentialFrom(privateKey: Hex, provider = 'Google') {
  return issueCredential({ privateKey, address: holder, provider, expiresAt: new Date(Date.now() + 30 * day) });
}

describe('parseIssuerDid', () => {
  it('trims and lower-cases a did:ethr DID', () => {
    expect(parseIssuerDid(`  ${shouting(PARTNER)} `)).toBe(PARTNER);
  });

  it.each(['did:ethr:0x1234', 'did:web:example.com', `did:ethr:mainnet:${PARTNER.slice(9)}`, PARTNER.slice(9), '', `${PARTNER}0`])(
    'refuses %j with invalid_request',
    (raw) => {
      expect(() => parseIssuerDid(raw)).toThrow(expect.objectContaining({ code: 'invalid_request' }));
    },
  );
});

describe.each(databaseKinds)('trusted issuers on %s', (kind) => {
  describe('in development', () => {
    let t: TestApp;
    let devIssuer: string;

    beforeEach(async () => {
      // Upper case in the configuration too: it is normalised on load.
      t = await createTestApp(kind, { TRUSTED_ISSUERS: shouting(CONFIGURED) });
      devIssuer = issuerDidFromPrivateKey(t.ctx.devIssuerKey!);
    });
    afterEach(async () => t.close());

    it('adds an issuer given in upper case, stores it lower case, and lists it with its source and note', async () => {
      const added = await t.ctx.issuers.add(shouting(PARTNER), '  partner IAM  ');
      expect(added).toEqual({ did: PARTNER, source: 'database', note: 'partner IAM' });
      expect(await t.ctx.database.db.selectFrom('trusted_issuers').select(['did', 'note']).execute()).toEqual([
        { did: PARTNER, note: 'partner IAM' },
      ]);
      const list = await t.ctx.issuers.list();
      expect(list).toHaveLength(3);
      expect(list).toEqual(
        expect.arrayContaining([
          { did: CONFIGURED, source: 'configuration', note: '' },
          { did: devIssuer, source: 'development', note: '' },
          { did: PARTNER, source: 'database', note: 'partner IAM' },
        ]),
      );
    });

    it('refuses to add the same issuer twice, whatever its letter case', async () => {
      await t.ctx.issuers.add(PARTNER);
      await expect(t.ctx.issuers.add(shouting(PARTNER), 'again')).rejects.toMatchObject({
        code: 'invalid_request',
        message: expect.stringMatching(/already trusted/),
      });
      expect(await t.ctx.database.db.selectFrom('trusted_issuers').selectAll().execute()).toHaveLength(1);
    });

    it('removes a database issuer (any letter case); removing it again is not_found', async () => {
      await t.ctx.issuers.add(PARTNER);
      await t.ctx.issuers.remove(shouting(PARTNER));
      expect((await t.ctx.issuers.list()).map((i) => i.did)).not.toContain(PARTNER);
      expect((await t.ctx.issuers.current()).has(PARTNER)).toBe(false);
      const again = t.ctx.issuers.remove(PARTNER);
      await expect(again).rejects.toMatchObject({ code: 'not_found', message: expect.stringMatching(/not in the database list/) });
      await expect(t.ctx.issuers.remove(PARTNER)).rejects.not.toMatchObject({ message: expect.stringMatching(/configuration/) });
    });

    it('explains that a configured or development issuer cannot be removed from the database list', async () => {
      for (const did of [shouting(CONFIGURED), devIssuer]) {
        await expect(t.ctx.issuers.remove(did)).rejects.toMatchObject({
          code: 'not_found',
          message: expect.stringMatching(/trusted by configuration/),
        });
      }
      const current = await t.ctx.issuers.current();
      expect(current.has(CONFIGURED)).toBe(true);
      expect(current.has(devIssuer)).toBe(true);
    });

    it.each(['did:ethr:0x1234', 'did:web:example.com', 'not a did'])('refuses to add or remove the bad DID %j with invalid_request', async (raw) => {
      await expect(t.ctx.issuers.add(raw)).rejects.toMatchObject({ code: 'invalid_request', message: expect.stringMatching(/is not an issuer DID/) });
      await expect(t.ctx.issuers.remove(raw)).rejects.toMatchObject({ code: 'invalid_request' });
      expect(await t.ctx.database.db.selectFrom('trusted_issuers').selectAll().execute()).toEqual([]);
    });

    it('current() is the configured issuers, the database ones and the development issuer', async () => {
      expect([...(await t.ctx.issuers.current())].sort()).toEqual([CONFIGURED, devIssuer].sort());
      await t.ctx.issuers.add(PARTNER);
      await t.ctx.issuers.add(OTHER);
      expect([...(await t.ctx.issuers.current())].sort()).toEqual([CONFIGURED, devIssuer, PARTNER, OTHER].sort());
      await t.ctx.issuers.remove(OTHER);
      expect([...(await t.ctx.issuers.current())].sort()).toEqual([CONFIGURED, devIssuer, PARTNER].sort());
    });

    it('a credential counts on import exactly while its issuer is trusted', async () => {
      const partnerStamp = credentialFrom(PARTNER_KEY, 'Google');
      expect((await t.ctx.stamps.importCredentials([partnerStamp])).results[0]).toMatchObject({
        status: 'rejected',
        reason: 'issuer is not trusted',
      });
      await t.ctx.issuers.add(PARTNER);
      expect((await t.ctx.stamps.importCredentials([partnerStamp])).results[0]).toMatchObject({ status: 'stored' });
      await t.ctx.issuers.remove(PARTNER);
      const later = credentialFrom(PARTNER_KEY, 'Github');
      expect((await t.ctx.stamps.importCredentials([later])).results[0]).toMatchObject({ status: 'rejected', reason: 'issuer is not trusted' });
      // The development issuer's own credentials are trusted in development.
      expect((await t.ctx.stamps.importCredentials([credentialFrom(t.ctx.devIssuerKey!)])).results[0]).toMatchObject({ status: 'stored' });
    });
  });

  it('a cached trusted set is refreshed at once by add and remove in the same process', async () => {
    const t = await createTestApp(kind, { API_KEY_CACHE_TTL_MS: '600000' });
    try {
      expect((await t.ctx.issuers.current()).has(PARTNER)).toBe(false);
      await t.ctx.issuers.add(PARTNER);
      expect((await t.ctx.issuers.current()).has(PARTNER)).toBe(true);
      await t.ctx.issuers.remove(PARTNER);
      expect((await t.ctx.issuers.current()).has(PARTNER)).toBe(false);
    } finally {
      await t.close();
    }
  });

  describe('in production', () => {
    let dataDir: string;
    let devKey: Hex;
    let t: TestApp;

    beforeEach(async () => {
      // A development key exists in DATA_DIR (say, left from a development run), yet production must ignore it.
      dataDir = mkdtempSync(join(tmpdir(), 'stampgate-issuers-'));
      devKey = await loadOrCreateIssuerKey(dataDir);
      t = await createTestApp(kind, { STAMPGATE_ENV: 'production', PUBLIC_BASE_URL: 'https://passport.example.org', DATA_DIR: dataDir, TRUSTED_ISSUERS: CONFIGURED });
    });
    afterEach(async () => {
      await t.close();
      rmSync(dataDir, { recursive: true, force: true });
    });

    it('has no development issuer: not in the context, not listed, not trusted', async () => {
      expect(t.ctx.config.env).toBe('production');
      expect(t.ctx.devIssuerKey).toBeNull();
      expect(await t.ctx.issuers.list()).toEqual([{ did: CONFIGURED, source: 'configuration', note: '' }]);
      expect([...(await t.ctx.issuers.current())]).toEqual([CONFIGURED]);
    });

    it("rejects the development issuer's credentials as untrusted on import", async () => {
      const report = await t.ctx.stamps.importCredentials({ address: holder, credentials: [credentialFrom(devKey)] });
      expect(report).toMatchObject({ stored: 0, rejected: 1 });
      expect(report.results).toEqual([
        { index: '0.credentials[0]', status: 'rejected', reason: 'issuer is not trusted', provider: 'Google' },
      ]);
      expect(await t.ctx.database.db.selectFrom('stamps').selectAll().execute()).toEqual([]);
      // Removing it is refused without the configuration hint: production does not know it at all.
      await expect(t.ctx.issuers.remove(issuerDidFromPrivateKey(devKey))).rejects.not.toMatchObject({
        message: expect.stringMatching(/configuration/),
      });
    });
  });

  it('in production never creates a development key', async () => {
    const fresh = mkdtempSync(join(tmpdir(), 'stampgate-issuers-'));
    try {
      const prod = await createTestApp(kind, { STAMPGATE_ENV: 'production', PUBLIC_BASE_URL: 'https://passport.example.org', DATA_DIR: fresh });
      try {
        expect(prod.ctx.devIssuerKey).toBeNull();
        expect(existsSync(join(fresh, DEV_ISSUER_KEY_FILE))).toBe(false);
      } finally {
        await prod.close();
      }
    } finally {
      rmSync(fresh, { recursive: true, force: true });
    }
  });
});

describe.each(databaseKinds)('an issuer trusted by configuration on %s', (kind) => {
  it('cannot be added to the database list as well, so removing it never pretends to stop trusting it', async () => {
    const did = 'did:ethr:0x' + 'ab'.repeat(20);
    const t = await createTestApp(kind, { TRUSTED_ISSUERS: did });
    try {
      await expect(t.ctx.issuers.add(did.toUpperCase().replace('DID:ETHR:0X', 'did:ethr:0x'))).rejects.toMatchObject({ code: 'invalid_request', message: expect.stringContaining('already trusted by configuration') });
      await expect(t.ctx.issuers.remove(did)).rejects.toMatchObject({ code: 'not_found', message: expect.stringContaining('trusted by configuration') });
      expect((await t.ctx.issuers.current()).has(did)).toBe(true);
    } finally {
      await t.close();
    }
  });
});
