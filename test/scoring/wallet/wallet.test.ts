import { createHash } from 'node:crypto';
import type { Hex } from 'viem';
import { createSiweMessage } from 'viem/siwe';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { credentialDigest } from '../../../src/scoring/stamps/credentials.js';
import { issueCredential } from '../../../src/scoring/stamps/dev-issuer.js';
import { createWalletServices, type WalletServices } from '../../../src/scoring/wallet/wallet.module.js';
import { SIWE_CLOCK_SKEW_MS, type SiweSite, siweSite } from '../../../src/sessions/siwe-checks.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { databaseKinds } from '../../helpers/databases.js';
import { testWallet } from '../../helpers/stamps.js';

const day = 86_400_000;
const minute = 60_000;
/** A key no configuration trusts. */
const STRANGER_KEY: Hex = '0x8da4ef21b864d2cc526dbdb2a120bd2874c36c9d0a1fb7f8c63d7f7a8b41de8f';

const alice = testWallet(201);
const bob = testWallet(202);
const site: SiweSite = siweSite('https://stampgate.example');

describe.each(databaseKinds)('wallet sign-in and stamp writes on %s', (kind) => {
  let t: TestApp;
  let now: number;
  let wallet: WalletServices;

  beforeEach(async () => {
    t = await createTestApp(kind, { WALLET_SESSION_TTL_SECONDS: '900', NONCE_TTL_SECONDS: '600' });
    now = Date.now();
    wallet = createWalletServices(t.ctx.config, t.ctx.database, { stamps: t.ctx.stamps, clock: () => now });
  });
  afterEach(async () => t.close());

  async function messageFor(
    who: { account: { address: Hex } },
    overrides: Partial<Parameters<typeof createSiweMessage>[0]> = {},
  ): Promise<{ message: string; nonce: string }> {
    const offer = await wallet.sessions.issueNonce(site);
    const message = createSiweMessage({
      address: who.account.address,
      chainId: offer.chainId,
      domain: offer.domain,
      nonce: offer.nonce,
      uri: offer.uri,
      version: '1',
      statement: offer.statement,
      issuedAt: new Date(now),
      expirationTime: new Date(offer.expiresAt),
      ...overrides,
    });
    return { message, nonce: offer.nonce };
  }

  async function signedBy(who: typeof alice, message: string) {
    return { message, signature: await who.account.signMessage({ message }) };
  }

  async function sessionCount(): Promise<number> {
    const rows = await t.ctx.database.db.selectFrom('wallet_sessions').select('token_hash').execute();
    return rows.length;
  }

  describe('sign-in', () => {
    it('offers a random nonce with this service’s domain and URI', async () => {
      const a = await wallet.sessions.issueNonce(site);
      const b = await wallet.sessions.issueNonce(site);
      expect(a.nonce).toMatch(/^[0-9a-f]{64}$/);
      expect(a.nonce).not.toBe(b.nonce);
      expect(a).toMatchObject({ domain: 'stampgate.example', uri: 'https://stampgate.example', chainId: 1 });
      expect(new Date(a.expiresAt).getTime()).toBe(now + 600_000);
      expect(a.expiresAt).toMatch(/\+00:00$/);
    });

    it('opens a session for the signing address with a 256-bit token stored only as its hash', async () => {
      const { message } = await messageFor(alice);
      const session = await wallet.sessions.signIn(await signedBy(alice, message), site);
      expect(session.address).toBe(alice.address);
      expect(session.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(new Date(session.expiresAt).getTime()).toBe(now + 900_000);
      expect(await wallet.sessions.resolve(session.token)).toEqual({ address: alice.address, expiresAt: now + 900_000 });

      const rows = await t.ctx.database.db.selectFrom('wallet_sessions').selectAll().execute();
      expect(rows).toHaveLength(1);
      expect(rows[0]!.token_hash).toBe(createHash('sha256').update(session.token).digest('hex'));
      expect(JSON.stringify(rows)).not.toContain(session.token);
    });

    it('accepts a lower-case address and a message without statement', async () => {
      const { message } = await messageFor(alice, { statement: undefined });
      const lower = message.replace(alice.account.address, alice.address);
      expect((await wallet.sessions.signIn(await signedBy(alice, lower), site)).address).toBe(alice.address);
    });

    it('refuses a message for another domain', async () => {
      const { message } = await messageFor(alice, { domain: 'evil.example' });
      await expect(wallet.sessions.signIn(await signedBy(alice, message), site)).rejects.toMatchObject({
        code: 'invalid_siwe_message',
        message: expect.stringContaining('"evil.example"'),
      });
      // A look-alike with the right host but another port is another domain too.
      const { message: ported } = await messageFor(alice, { domain: 'stampgate.example:8443' });
      await expect(wallet.sessions.signIn(await signedBy(alice, ported), site)).rejects.toMatchObject({ code: 'invalid_siwe_message' });
      // Byte for byte: another spelling of the same host (letter case, the default port) is refused too.
      for (const domain of ['StampGate.example', 'stampgate.example:443', 'stampgate.example.']) {
        const spelt = (await messageFor(alice)).message.replace('stampgate.example wants', `${domain} wants`);
        await expect(wallet.sessions.signIn(await signedBy(alice, spelt), site)).rejects.toMatchObject({ code: 'invalid_siwe_message' });
      }
    });

    it('refuses a URI on another origin, and a scheme other than this service’s', async () => {
      const { message } = await messageFor(alice, { uri: 'https://evil.example/stampgate.example' });
      await expect(wallet.sessions.signIn(await signedBy(alice, message), site)).rejects.toMatchObject({
        code: 'invalid_siwe_message',
        message: expect.stringContaining('URI must be on https://stampgate.example'),
      });
      const { message: http } = await messageFor(alice, { uri: 'http://stampgate.example/' });
      await expect(wallet.sessions.signIn(await signedBy(alice, http), site)).rejects.toMatchObject({ code: 'invalid_siwe_message' });
      const { message: scheme } = await messageFor(alice, { scheme: 'http' });
      await expect(wallet.sessions.signIn(await signedBy(alice, scheme), site)).rejects.toMatchObject({
        code: 'invalid_siwe_message',
        message: expect.stringContaining('scheme'),
      });
      // Any path on the origin is fine.
      const { message: path } = await messageFor(alice, { uri: 'https://stampgate.example/app/login?x=1', scheme: 'https' });
      await expect(wallet.sessions.signIn(await signedBy(alice, path), site)).resolves.toMatchObject({ address: alice.address });
    });

    it('refuses an expired message and one without an Expiration Time', async () => {
      const { message: expired } = await messageFor(alice, { issuedAt: new Date(now - 10 * minute), expirationTime: new Date(now - 1) });
      await expect(wallet.sessions.signIn(await signedBy(alice, expired), site)).rejects.toMatchObject({
        code: 'invalid_siwe_message',
        message: expect.stringContaining('expired'),
      });
      const { message: endless } = await messageFor(alice, { expirationTime: undefined });
      await expect(wallet.sessions.signIn(await signedBy(alice, endless), site)).rejects.toMatchObject({
        code: 'invalid_siwe_message',
        message: 'The message must have an Expiration Time.',
      });
      expect(await sessionCount()).toBe(0);
    });

    it('refuses an Issued At in the future beyond the clock skew, and respects Not Before', async () => {
      const { message: future } = await messageFor(alice, {
        issuedAt: new Date(now + SIWE_CLOCK_SKEW_MS + minute),
        expirationTime: new Date(now + 60 * minute),
      });
      await expect(wallet.sessions.signIn(await signedBy(alice, future), site)).rejects.toMatchObject({
        code: 'invalid_siwe_message',
        message: expect.stringContaining('Issued At lies in the future'),
      });
      const { message: notYet } = await messageFor(alice, { notBefore: new Date(now + 30 * minute), expirationTime: new Date(now + 60 * minute) });
      await expect(wallet.sessions.signIn(await signedBy(alice, notYet), site)).rejects.toMatchObject({
        code: 'invalid_siwe_message',
        message: expect.stringContaining('not valid before'),
      });
      const { message: skewed } = await messageFor(alice, { issuedAt: new Date(now + minute), notBefore: new Date(now + minute) });
      await expect(wallet.sessions.signIn(await signedBy(alice, skewed), site)).resolves.toMatchObject({ address: alice.address });
    });

    it('refuses a reused nonce, an unknown nonce and an expired nonce', async () => {
      const { message } = await messageFor(alice);
      const signed = await signedBy(alice, message);
      await wallet.sessions.signIn(signed, site);
      await expect(wallet.sessions.signIn(signed, site)).rejects.toMatchObject({ code: 'invalid_nonce' });

      const offer = await wallet.sessions.issueNonce(site);
      const unknown = createSiweMessage({
        address: alice.account.address,
        chainId: 1,
        domain: offer.domain,
        uri: offer.uri,
        version: '1',
        nonce: 'f'.repeat(64),
        issuedAt: new Date(now),
        expirationTime: new Date(now + 10 * minute),
      });
      await expect(wallet.sessions.signIn(await signedBy(alice, unknown), site)).rejects.toMatchObject({ code: 'invalid_nonce' });

      const { message: late } = await messageFor(alice, { expirationTime: new Date(now + 60 * minute) });
      const lateSigned = await signedBy(alice, late);
      now += 600_000; // the nonce's time to live
      await expect(wallet.sessions.signIn(lateSigned, site)).rejects.toMatchObject({ code: 'invalid_nonce' });
      expect(await sessionCount()).toBe(1);
    });

    it('lets only one of two concurrent sign-ins with the same message through', async () => {
      const { message } = await messageFor(alice);
      const signed = await signedBy(alice, message);
      const outcomes = await Promise.allSettled([wallet.sessions.signIn(signed, site), wallet.sessions.signIn(signed, site)]);
      expect(outcomes.map((o) => o.status).sort()).toEqual(['fulfilled', 'rejected']);
      expect(outcomes.find((o) => o.status === 'rejected')).toMatchObject({ reason: { code: 'invalid_nonce' } });
      expect(await sessionCount()).toBe(1);
    });

    it('refuses a signature by another key, for the message’s address or anyone else’s, and keeps the nonce usable', async () => {
      // Bob signs a message that claims Alice's address.
      const { message } = await messageFor(alice);
      const forged = { message, signature: await bob.account.signMessage({ message }) };
      await expect(wallet.sessions.signIn(forged, site)).rejects.toMatchObject({
        code: 'invalid_signature',
        message: expect.stringContaining('not made by the message\'s address'),
      });
      // A signature over a different text does not count for this one.
      const other = await alice.account.signMessage({ message: `${message} ` });
      await expect(wallet.sessions.signIn({ message, signature: other }, site)).rejects.toMatchObject({ code: 'invalid_signature' });
      await expect(wallet.sessions.signIn({ message, signature: '0x1234' }, site)).rejects.toMatchObject({
        code: 'invalid_signature',
        message: expect.stringContaining('malformed'),
      });
      expect(await sessionCount()).toBe(0);
      // None of that consumed the nonce: Alice's own signature still signs her in.
      await expect(wallet.sessions.signIn(await signedBy(alice, message), site)).resolves.toMatchObject({ address: alice.address });
    });

    it('ends a session at its expiry and at sign-out', async () => {
      const { message } = await messageFor(alice);
      const { token } = await wallet.sessions.signIn(await signedBy(alice, message), site);
      now += 900_000 - 1;
      expect(await wallet.sessions.resolve(token)).not.toBeNull();
      now += 1;
      expect(await wallet.sessions.resolve(token)).toBeNull();

      now = Date.now();
      const { message: again } = await messageFor(alice);
      const second = await wallet.sessions.signIn(await signedBy(alice, again), site);
      expect(await wallet.sessions.signOut(second.token)).toBe(true);
      expect(await wallet.sessions.resolve(second.token)).toBeNull();
      expect(await wallet.sessions.signOut(second.token)).toBe(false);
    });

    it('resolves no session for missing, malformed or unknown tokens', async () => {
      expect(await wallet.sessions.resolve(undefined)).toBeNull();
      expect(await wallet.sessions.resolve('')).toBeNull();
      expect(await wallet.sessions.resolve("' or 1=1 --")).toBeNull();
      expect(await wallet.sessions.resolve('A'.repeat(43))).toBeNull();
    });
  });

  describe('stamp writes', () => {
    let trusted: ReadonlySet<string>;
    beforeEach(async () => {
      trusted = await t.ctx.issuers.current();
    });

    const credential = (address: string, provider: string, options: { nullifiers?: string[]; expiresInMs?: number; key?: Hex } = {}) =>
      issueCredential({
        privateKey: options.key ?? t.ctx.devIssuerKey!,
        address,
        provider,
        nullifiers: options.nullifiers,
        issuedAt: new Date(),
        expiresAt: new Date(Date.now() + (options.expiresInMs ?? 90 * day)),
      });

    const live = async (address: string) =>
      (await t.ctx.stamps.listForOperator(address)).filter((s) => s.state === 'live').map((s) => s.provider).sort();

    it('stores the good credentials and reports each bad one by index with its reason', async () => {
      const google = credential(alice.address, 'Google');
      const tampered = { ...credential(alice.address, 'Discord'), issuanceDate: '2020-01-01T00:00:00Z' };
      const report = await wallet.stamps.add(
        alice.address,
        [
          google,
          credential(bob.address, 'Linkedin'),
          credential(alice.address, 'Github', { key: STRANGER_KEY }),
          tampered,
          credential(alice.address, 'Twitter', { expiresInMs: -day }),
          google,
          credential(alice.address, 'Linkedin'),
        ],
        trusted,
      );
      expect(report).toEqual({
        stored: 2,
        unchanged: 1,
        rejected: 4,
        deleted: 0,
        results: [
          { index: 0, status: 'stored', provider: 'Google' },
          { index: 1, status: 'rejected', provider: 'Linkedin', reason: 'credential subject is a different address' },
          { index: 2, status: 'rejected', provider: 'Github', reason: 'issuer is not trusted' },
          { index: 3, status: 'rejected', reason: 'proof signature does not match the issuer' },
          { index: 4, status: 'rejected', provider: 'Twitter', reason: expect.stringContaining('credential expired at') },
          { index: 5, status: 'unchanged', provider: 'Google' },
          { index: 6, status: 'stored', provider: 'Linkedin' },
        ],
      });
      expect(await live(alice.address)).toEqual(['Google', 'Linkedin']);
      expect(await live(bob.address)).toEqual([]);
    });

    it('lists the wallet’s live stamps with their stored credential', async () => {
      const google = credential(alice.address, 'Google');
      await wallet.stamps.add(alice.address, [google], trusted);
      const items = await wallet.stamps.list(alice.address);
      expect(items).toEqual([
        {
          provider: 'Google',
          issuer: google.issuer,
          digest: credentialDigest(google),
          issuanceDate: expect.stringMatching(/\+00:00$/),
          expirationDate: expect.stringMatching(/\+00:00$/),
          addedAt: expect.stringMatching(/\+00:00$/),
          credential: google,
        },
      ]);
    });

    it('deletes only the wallet’s own stamps of the named providers, softly', async () => {
      await wallet.stamps.add(alice.address, [credential(alice.address, 'Google'), credential(alice.address, 'Discord')], trusted);
      await t.ctx.stamps.importCredentials([credential(bob.address, 'Google')]);
      expect(await wallet.stamps.remove(alice.address, ['Google', 'Google', 'Unknown'])).toEqual({ deleted: 1 });
      expect(await live(alice.address)).toEqual(['Discord']);
      expect(await live(bob.address)).toEqual(['Google']);
      const all = await t.ctx.stamps.listForOperator(alice.address);
      expect(all.map((s) => [s.provider, s.state]).sort()).toEqual([
        ['Discord', 'live'],
        ['Google', 'deleted'],
      ]);
      expect(await wallet.stamps.remove(alice.address, ['Google'])).toEqual({ deleted: 0 });
    });

    it('replaces the whole set: afterwards the live stamps are exactly the accepted credentials', async () => {
      const google = credential(alice.address, 'Google');
      await wallet.stamps.add(alice.address, [google, credential(alice.address, 'Discord'), credential(alice.address, 'Linkedin')], trusted);
      const report = await wallet.stamps.replace(alice.address, [google, credential(alice.address, 'Github')], trusted, 'all');
      expect(report).toMatchObject({ stored: 1, unchanged: 1, rejected: 0, deleted: 2 });
      expect(await live(alice.address)).toEqual(['Github', 'Google']);
      expect((await wallet.stamps.replace(alice.address, [], trusted, 'all')).deleted).toBe(2);
      expect(await live(alice.address)).toEqual([]);
    });

    it('deletes nothing when a whole-set replacement has a rejected credential, and keeps the accepted ones', async () => {
      await wallet.stamps.add(alice.address, [credential(alice.address, 'Discord'), credential(alice.address, 'Linkedin')], trusted);
      const report = await wallet.stamps.replace(alice.address, [credential(alice.address, 'Github'), credential(bob.address, 'Google')], trusted, 'all');
      expect(report).toMatchObject({ stored: 1, rejected: 1, deleted: 0 });
      expect(report.results.map((r) => r.status)).toEqual(['stored', 'rejected']);
      expect(await live(alice.address)).toEqual(['Discord', 'Github', 'Linkedin']);
    });

    it('replaces provider by provider: only providers with an accepted credential change', async () => {
      const oldGoogle = credential(alice.address, 'Google', { nullifiers: ['old'] });
      await wallet.stamps.add(alice.address, [oldGoogle, credential(alice.address, 'Discord'), credential(alice.address, 'Linkedin')], trusted);
      const newGoogle = credential(alice.address, 'Google', { nullifiers: ['new'] });
      const report = await wallet.stamps.replace(
        alice.address,
        [newGoogle, credential(alice.address, 'Discord', { key: STRANGER_KEY })],
        trusted,
        'providers',
      );
      expect(report).toMatchObject({ stored: 1, rejected: 1, deleted: 1 });
      expect(await live(alice.address)).toEqual(['Discord', 'Google', 'Linkedin']);
      expect((await wallet.stamps.list(alice.address)).find((s) => s.provider === 'Google')!.digest).toBe(credentialDigest(newGoogle));
    });

    it('restores a deleted stamp when it is added again', async () => {
      const google = credential(alice.address, 'Google');
      await wallet.stamps.add(alice.address, [google], trusted);
      await wallet.stamps.remove(alice.address, ['Google']);
      expect((await wallet.stamps.add(alice.address, [google], trusted)).results[0]).toEqual({ index: 0, status: 'stored', provider: 'Google' });
      expect(await live(alice.address)).toEqual(['Google']);
    });
  });
});
