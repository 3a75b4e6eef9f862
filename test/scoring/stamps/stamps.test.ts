import { readFileSync } from 'node:fs';
import { getAddress, type Hex } from 'viem';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AppError } from '../../../src/errors.js';
import { credentialDigest, CredentialVerifier, verifyCredentialProof } from '../../../src/scoring/stamps/credentials.js';
import { issueCredential, issuerDidFromPrivateKey, type StampCredential } from '../../../src/scoring/stamps/dev-issuer.js';
import { stampService } from '../../../src/scoring/stamps/stamps.service.js';
import { stampsRepository } from '../../../src/scoring/stamps/stamps.repository.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { databaseKinds } from '../../helpers/databases.js';
import { hostileCredential, hostileCredentialOfSize } from '../../helpers/hostile-credentials.js';
import { testWallet } from '../../helpers/stamps.js';

type Json = Record<string, any>;

const day = 86_400_000;
const REFERENCE_ISSUER = 'did:ethr:0x018d103c154748e8d5a1d7658185125175457f84';
const REFERENCE_SUBJECT = '0xaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
/** A key no configuration trusts. */
const STRANGER_KEY: Hex = '0x8da4ef21b864d2cc526dbdb2a120bd2874c36c9d0a1fb7f8c63d7f7a8b41de8f';

const referenceText = readFileSync(new URL('../../fixtures/reference-credentials-expired.json', import.meta.url), 'utf8');
const referenceCredentials = (): Json[] => JSON.parse(referenceText) as Json[];

const alice = testWallet(101).address;
const bob = testWallet(102).address;

/** Same value, every object's keys in reverse order (arrays keep their order). */
function reordered(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reordered);
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(
      Object.entries(value)
        .reverse()
        .map(([key, inner]) => [key, reordered(inner)]),
    );
  }
  return value;
}

describe.each(databaseKinds)('stamp import and revocation on %s', (kind) => {
  let t: TestApp;
  let devIssuer: string;

  beforeEach(async () => {
    // The reference issuer is trusted so that its (expired) credentials get as far as the expiry check.
    t = await createTestApp(kind, { TRUSTED_ISSUERS: REFERENCE_ISSUER });
    devIssuer = issuerDidFromPrivateKey(t.ctx.devIssuerKey!);
  });
  afterEach(async () => t.close());

  function issue(address: string, provider: string, options: { nullifiers?: string[]; key?: Hex } = {}): StampCredential {
    return issueCredential({
      privateKey: options.key ?? t.ctx.devIssuerKey!,
      address,
      provider,
      nullifiers: options.nullifiers,
      issuedAt: new Date(Date.now() - 1000),
      expiresAt: new Date(Date.now() + 90 * day),
    });
  }

  async function rows() {
    return t.ctx.database.db.selectFrom('stamps').selectAll().orderBy('id').execute();
  }

  /** The row holds exactly what the credential says, and the credential itself as received. */
  async function expectStored(credential: StampCredential, address: string) {
    const found = (await rows()).filter((row) => row.digest === credentialDigest(credential));
    expect(found).toHaveLength(1);
    const row = found[0]!;
    expect(row).toMatchObject({
      address: address.toLowerCase(),
      provider: credential.credentialSubject.provider,
      issuer: credential.issuer,
      deleted_at: null,
      revoked_at: null,
      issuance_date: Date.parse(credential.issuanceDate),
      expiration_date: Date.parse(credential.expirationDate),
    });
    expect(JSON.parse(row.nullifiers)).toEqual(credential.credentialSubject.nullifiers);
    expect(JSON.parse(row.credential)).toEqual(credential);
    // Unchanged also means the same member order at every level: the stored text re-serialises identically.
    expect(JSON.stringify(JSON.parse(row.credential))).toBe(JSON.stringify(credential));
  }

  describe('accepted document shapes', () => {
    it('an array of credentials: each is stored for its own subject, indexed by position', async () => {
      const google = issue(alice, 'Google');
      const github = issue(bob, 'Github');
      const report = await t.ctx.stamps.importCredentials([google, github]);
      expect(report).toEqual({
        stored: 2,
        unchanged: 0,
        rejected: 0,
        results: [
          { index: '0', status: 'stored', provider: 'Google', address: alice },
          { index: '1', status: 'stored', provider: 'Github', address: bob },
        ],
      });
      expect(await rows()).toHaveLength(2);
      await expectStored(google, alice);
      await expectStored(github, bob);
    });

    it('an array of {address, credentials} documents: indexed as "i.credentials[j]", stored under the lower-cased address', async () => {
      const aliceGoogle = issue(alice, 'Google');
      const aliceTwitter = issue(alice, 'Twitter');
      const bobGoogle = issue(bob, 'Google');
      const report = await t.ctx.stamps.importCredentials([
        { address: getAddress(alice), credentials: [aliceGoogle, aliceTwitter] },
        { address: bob.toUpperCase().replace('0X', '0x'), credentials: [bobGoogle] },
      ]);
      expect(report).toEqual({
        stored: 3,
        unchanged: 0,
        rejected: 0,
        results: [
          { index: '0.credentials[0]', status: 'stored', provider: 'Google', address: alice },
          { index: '0.credentials[1]', status: 'stored', provider: 'Twitter', address: alice },
          { index: '1.credentials[0]', status: 'stored', provider: 'Google', address: bob },
        ],
      });
      expect(await rows()).toHaveLength(3);
      await expectStored(aliceGoogle, alice);
      await expectStored(aliceTwitter, alice);
      await expectStored(bobGoogle, bob);
    });

    it('a single {address, credentials} document', async () => {
      const google = issue(alice, 'Google');
      const github = issue(alice, 'Github');
      const report = await t.ctx.stamps.importCredentials({ address: alice, credentials: [google, github] });
      expect(report.results).toEqual([
        { index: '0.credentials[0]', status: 'stored', provider: 'Google', address: alice },
        { index: '0.credentials[1]', status: 'stored', provider: 'Github', address: alice },
      ]);
      expect(report).toMatchObject({ stored: 2, unchanged: 0, rejected: 0 });
      await expectStored(google, alice);
      await expectStored(github, alice);
    });
  });

  describe('a mixed file', () => {
    let good: { aliceGoogle: StampCredential; bobGoogle: StampCredential; aliceTwitter: StampCredential };
    let document: unknown[];

    beforeEach(() => {
      good = { aliceGoogle: issue(alice, 'Google'), bobGoogle: issue(bob, 'Google'), aliceTwitter: issue(alice, 'Twitter') };
      // Tampering: the holder stretches the validity of a genuine credential.
      const tampered = structuredClone(issue(alice, 'Github')) as Json;
      tampered.expirationDate = '2099-01-01T00:00:00Z';
      document = [
        good.aliceGoogle, // 0
        tampered, // 1
        issue(alice, 'Discord', { key: STRANGER_KEY }), // 2: valid proof, untrusted issuer
        { address: REFERENCE_SUBJECT, credentials: referenceCredentials() }, // 3: genuine but expired
        42, // 4
        'a string', // 5
        { address: bob, credentials: [issue(alice, 'Linkedin'), good.bobGoogle] }, // 6: first is about someone else
        { credentials: [issue(alice, 'Ens')] }, // 7: no address
        { address: '0x1234', credentials: [issue(alice, 'Ens')] }, // 8: not an address
        good.aliceTwitter, // 9
      ];
    });

    it('reports each bad credential by its index with a reason, and stores the good ones', async () => {
      const report = await t.ctx.stamps.importCredentials(document);
      const rejected = (reason: RegExp, extra: Json = {}) => ({ status: 'rejected', reason: expect.stringMatching(reason), ...extra });
      expect(report.results).toEqual([
        { index: '0', status: 'stored', provider: 'Google', address: alice },
        { index: '1', ...rejected(/^proof signature does not match the issuer$/) },
        { index: '2', ...rejected(/^issuer is not trusted$/, { provider: 'Discord' }) },
        { index: '3.credentials[0]', ...rejected(/^credential expired at 2026-02-18T13:12:09\.000Z$/, { provider: 'Google' }) },
        { index: '3.credentials[1]', ...rejected(/^credential expired at 2026-02-18T13:12:09\.000Z$/, { provider: 'Twitter' }) },
        { index: '3.credentials[2]', ...rejected(/^credential expired at 2026-02-18T13:12:09\.000Z$/, { provider: 'Github' }) },
        { index: '4', ...rejected(/not a JSON object/) },
        { index: '5', ...rejected(/not a JSON object/) },
        { index: '6.credentials[0]', ...rejected(/^credential subject is a different address$/, { provider: 'Linkedin' }) },
        { index: '6.credentials[1]', status: 'stored', provider: 'Google', address: bob },
        { index: '7', ...rejected(/address/) },
        { index: '8', ...rejected(/address/) },
        { index: '9', status: 'stored', provider: 'Twitter', address: alice },
      ]);
      expect(report).toMatchObject({ stored: 3, unchanged: 0, rejected: 10 });

      const stored = await rows();
      expect(stored.map((row) => `${row.address} ${row.provider}`).sort()).toEqual(
        [`${alice} Google`, `${alice} Twitter`, `${bob} Google`].sort(),
      );
      expect(stored.every((row) => row.issuer === devIssuer)).toBe(true);
      await expectStored(good.aliceGoogle, alice);
      await expectStored(good.bobGoogle, bob);
      await expectStored(good.aliceTwitter, alice);
    });

    it('rejects the reference credentials only for having expired', async () => {
      // The same service before their expiry stores them: the proof and trust checks pass, only time fails them now.
      const { ctx } = t;
      const before = stampService(stampsRepository(ctx.database), new CredentialVerifier(), ctx.issuers, () =>
        Date.parse('2026-01-01T00:00:00Z'),
      );
      const report = await before.importCredentials(referenceCredentials());
      expect(report).toMatchObject({ stored: 3, rejected: 0 });
      expect(report.results.every((r) => r.address === REFERENCE_SUBJECT)).toBe(true);
      expect((await rows()).map((row) => row.issuer)).toEqual([REFERENCE_ISSUER, REFERENCE_ISSUER, REFERENCE_ISSUER]);
    });

    it('re-importing the same file answers unchanged, adds no rows and verifies no proof again', async () => {
      await t.ctx.stamps.importCredentials(document);
      const rowsBefore = await rows();
      const statsBefore = t.ctx.verifier.stats();

      const again = await t.ctx.stamps.importCredentials(structuredClone(document));
      expect(again).toMatchObject({ stored: 0, unchanged: 3, rejected: 10 });
      expect(again.results.filter((r) => r.status === 'unchanged').map((r) => r.index)).toEqual(['0', '6.credentials[1]', '9']);
      expect(again.results.filter((r) => r.status === 'rejected').map((r) => r.index)).toEqual([
        '1',
        '2',
        '3.credentials[0]',
        '3.credentials[1]',
        '3.credentials[2]',
        '4',
        '5',
        '6.credentials[0]',
        '7',
        '8',
      ]);
      expect(await rows()).toEqual(rowsBefore);

      // Every object credential's proof result (good or bad) came from the cache, except the
      // untrusted issuer's, which is refused before its proof is looked at.
      const statsAfter = t.ctx.verifier.stats();
      expect(statsAfter.misses).toBe(statsBefore.misses);
      expect(statsAfter.hits - statsBefore.hits).toBe(8);
    });
  });

  describe('intake limits (what `stampgate stamps import` applies)', () => {
    it('rejects over-limit and hostile-schema credentials by index before any proof check, and stores the rest', async () => {
      const deep = structuredClone(issue(alice, 'Github')) as Json;
      deep.credentialSubject.provider = [[[[[[['Github']]]]]]];
      const long = structuredClone(issue(alice, 'Discord')) as Json;
      long.credentialSubject.nullifiers = ['n'.repeat(1025)];
      const hostile = hostileCredentialOfSize(issue(alice, 'Ens') as unknown as Json, 66_000);
      const untrustedHostile = hostileCredential(issue(alice, 'Linkedin', { key: STRANGER_KEY }) as unknown as Json, 30, 10);
      const before = t.ctx.verifier.stats();
      const report = await t.ctx.stamps.importCredentials([deep, long, hostile, untrustedHostile, issue(alice, 'Google')]);
      expect(report.results).toEqual([
        { index: '0', status: 'rejected', reason: 'nested deeper than 8 levels' },
        { index: '1', status: 'rejected', reason: 'has a string longer than 1024 characters' },
        { index: '2', status: 'rejected', reason: 'the EIP-712 types in the proof are not the stamp schema' },
        { index: '3', status: 'rejected', reason: 'issuer is not trusted', provider: 'Linkedin' },
        { index: '4', status: 'stored', provider: 'Google', address: alice },
      ]);
      // Only the good credential reached the proof check.
      expect(t.ctx.verifier.stats().misses - before.misses).toBe(1);
    });

    it('imports a file longer than MAX_STAMPS_PER_REQUEST whole (the count bounds requests, not operator files)', async () => {
      const limited = await createTestApp(kind, { MAX_STAMPS_PER_REQUEST: '2' });
      try {
        const key = limited.ctx.devIssuerKey!;
        const make = (provider: string) => issueCredential({ privateKey: key, address: alice, provider, expiresAt: new Date(Date.now() + day) });
        expect(
          await limited.ctx.stamps.importCredentials([make('Google'), { address: alice, credentials: [make('Github'), make('Ens')] }]),
        ).toMatchObject({ stored: 3, rejected: 0 });
        expect(await limited.ctx.stamps.listForOperator(alice)).toHaveLength(3);
      } finally {
        await limited.close();
      }
    });
  });

  it('recognises the same credential with its keys in another order (same digest)', async () => {
    const original = issue(alice, 'Google');
    const shuffled = reordered(original) as Json;
    expect(JSON.stringify(shuffled)).not.toBe(JSON.stringify(original));
    expect(verifyCredentialProof(shuffled).ok).toBe(true);
    expect(credentialDigest(shuffled)).toBe(credentialDigest(original));

    expect((await t.ctx.stamps.importCredentials([original])).results[0]).toMatchObject({ status: 'stored' });
    const misses = t.ctx.verifier.stats().misses;
    const report = await t.ctx.stamps.importCredentials({ address: alice, credentials: [shuffled] });
    expect(report.results).toEqual([{ index: '0.credentials[0]', status: 'unchanged', provider: 'Google', address: alice }]);
    expect(t.ctx.verifier.stats().misses).toBe(misses);
    expect(await rows()).toHaveLength(1);
    // The first form received is the one kept.
    await expectStored(original, alice);
  });

  it('also stores a reformatted credential as received when it comes first', async () => {
    const shuffled = reordered(issue(alice, 'Google')) as StampCredential;
    expect((await t.ctx.stamps.importCredentials([shuffled])).stored).toBe(1);
    await expectStored(shuffled, alice);
  });

  it('does not store a revoked credential again, in any key order', async () => {
    const credential = issue(alice, 'Google');
    await t.ctx.stamps.importCredentials([credential]);
    expect(await t.ctx.stamps.revoke({ digest: credentialDigest(credential) })).toBe(1);

    const again = await t.ctx.stamps.importCredentials([credential, reordered(credential)]);
    expect(again.results).toEqual([
      { index: '0', status: 'rejected', reason: expect.stringMatching(/revoked/), provider: 'Google', address: alice },
      { index: '1', status: 'rejected', reason: expect.stringMatching(/revoked/), provider: 'Google', address: alice },
    ]);
    expect(again).toMatchObject({ stored: 0, unchanged: 0, rejected: 2 });

    const stored = await rows();
    expect(stored).toHaveLength(1);
    expect(stored[0]!.revoked_at).toEqual(expect.any(Number));
    expect(await t.ctx.stamps.listForOperator(alice)).toMatchObject([{ provider: 'Google', state: 'revoked' }]);
  });

  describe('revoke', () => {
    let aliceGoogle: StampCredential;
    let bobGoogle: StampCredential;

    beforeEach(async () => {
      aliceGoogle = issue(alice, 'Google');
      bobGoogle = issue(bob, 'Google');
      const report = await t.ctx.stamps.importCredentials([aliceGoogle, issue(alice, 'Github'), issue(alice, 'Twitter'), bobGoogle]);
      expect(report.stored).toBe(4);
    });

    async function states(address: string) {
      return Object.fromEntries((await t.ctx.stamps.listForOperator(address)).map((s) => [s.provider, s.state]));
    }

    it('by address and provider revokes just that stamp, and counts only what it changed', async () => {
      expect(await t.ctx.stamps.revoke({ address: alice, provider: 'Google' })).toBe(1);
      expect(await states(alice)).toEqual({ Google: 'revoked', Github: 'live', Twitter: 'live' });
      expect(await states(bob)).toEqual({ Google: 'live' });
      // Already revoked: nothing more to do.
      expect(await t.ctx.stamps.revoke({ address: alice, provider: 'Google' })).toBe(0);
      expect(await t.ctx.stamps.revoke({ address: alice, provider: 'NoSuchProvider' })).toBe(0);
    });

    it('by address (any letter case) revokes all of its stamps and none of anyone else', async () => {
      expect(await t.ctx.stamps.revoke({ address: getAddress(alice) })).toBe(3);
      expect(await states(alice)).toEqual({ Google: 'revoked', Github: 'revoked', Twitter: 'revoked' });
      expect(await states(bob)).toEqual({ Google: 'live' });
      expect(await t.ctx.stamps.revoke({ address: alice })).toBe(0);
    });

    it('by digest revokes that one credential', async () => {
      expect(await t.ctx.stamps.revoke({ digest: credentialDigest(bobGoogle) })).toBe(1);
      expect(await states(bob)).toEqual({ Google: 'revoked' });
      expect(await states(alice)).toEqual({ Google: 'live', Github: 'live', Twitter: 'live' });
      expect(await t.ctx.stamps.revoke({ digest: credentialDigest(bobGoogle) })).toBe(0);
      expect(await t.ctx.stamps.revoke({ digest: 'f'.repeat(64) })).toBe(0);
      // Digest and address together must both match.
      expect(await t.ctx.stamps.revoke({ digest: credentialDigest(aliceGoogle), address: bob })).toBe(0);
      expect(await states(alice)).toMatchObject({ Google: 'live' });
    });

    it('refuses a call that names no stamps (no digest, no address), even with a provider', async () => {
      await expect(t.ctx.stamps.revoke({})).rejects.toMatchObject({ code: 'invalid_request' });
      await expect(t.ctx.stamps.revoke({ provider: 'Google' })).rejects.toBeInstanceOf(AppError);
      await expect(t.ctx.stamps.revoke({ provider: 'Google' })).rejects.toMatchObject({ code: 'invalid_request' });
      await expect(t.ctx.stamps.revoke({ address: '0x1234' })).rejects.toMatchObject({ code: 'invalid_address' });
      expect(await states(alice)).toEqual({ Google: 'live', Github: 'live', Twitter: 'live' });
      expect(await states(bob)).toEqual({ Google: 'live' });
      expect((await rows()).every((row) => row.revoked_at === null)).toBe(true);
    });
  });

  it('caches proof results: re-importing verifies nothing again, a new credential is one miss', async () => {
    const credentials = [issue(alice, 'Google'), issue(alice, 'Github'), issue(bob, 'Google')];
    const start = t.ctx.verifier.stats();
    await t.ctx.stamps.importCredentials(credentials);
    const first = t.ctx.verifier.stats();
    expect(first.misses - start.misses).toBe(3);

    await t.ctx.stamps.importCredentials(credentials);
    await t.ctx.stamps.importCredentials({ address: alice, credentials: credentials.slice(0, 2).map(reordered) });
    const second = t.ctx.verifier.stats();
    expect(second.misses).toBe(first.misses);
    expect(second.hits - first.hits).toBe(5);

    await t.ctx.stamps.importCredentials([issue(bob, 'Github')]);
    expect(t.ctx.verifier.stats().misses).toBe(first.misses + 1);
  });
});
