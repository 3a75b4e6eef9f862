import type { Hex } from 'viem';
import { createSiweMessage } from 'viem/siwe';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createWalletServices, type WalletServices } from '../../src/scoring/wallet/wallet.module.js';
import { type SiweSite, siweSite } from '../../src/sessions/siwe-checks.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { databaseKinds } from '../helpers/databases.js';
import { testWallet } from '../helpers/stamps.js';

/** The SIWE checks that must not normalise, and the allowed chains. */
const minute = 60_000;
const alice = testWallet(211);
const site: SiweSite = siweSite('https://stampgate.example');

describe.each(databaseKinds)('strict Sign-In with Ethereum on %s', (kind) => {
  let t: TestApp;
  let now: number;
  let wallet: WalletServices;

  beforeEach(async () => {
    t = await createTestApp(kind);
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
    return (await t.ctx.database.db.selectFrom('wallet_sessions').select('token_hash').execute()).length;
  }

  it('accepts only the chain ids of SIWE_ALLOWED_CHAIN_IDS (default 1), offering the first', async () => {
    const { message: base } = await messageFor(alice, { chainId: 8453 });
    await expect(wallet.sessions.signIn(await signedBy(alice, base), site)).rejects.toMatchObject({
      code: 'invalid_siwe_message',
      message: expect.stringContaining('Chain ID 8453 is not accepted here (accepted: 1)'),
    });
    const configured = createWalletServices({ ...t.ctx.config, siweAllowedChainIds: [8453, 10] }, t.ctx.database, { stamps: t.ctx.stamps, clock: () => now });
    const offer = await configured.sessions.issueNonce(site);
    expect(offer.chainId).toBe(8453);
    for (const chainId of [8453, 10]) {
      const { message } = await messageFor(alice, { chainId });
      const again = message.replace(/Nonce: \w+/, `Nonce: ${(await configured.sessions.issueNonce(site)).nonce}`);
      await expect(configured.sessions.signIn(await signedBy(alice, again), site)).resolves.toMatchObject({ address: alice.address });
    }
    const { message: mainnet } = await messageFor(alice, { chainId: 1 });
    const fresh = mainnet.replace(/Nonce: \w+/, `Nonce: ${(await configured.sessions.issueNonce(site)).nonce}`);
    await expect(configured.sessions.signIn(await signedBy(alice, fresh), site)).rejects.toMatchObject({ code: 'invalid_siwe_message' });
  });

  it('compares the domain byte for byte and the URI as written, without user information (finding 8)', async () => {
    const local = siweSite('http://127.0.0.1:8000');
    // Written as text: viem's message builder itself refuses some of these spellings.
    const refusedAt = async (change: { domain?: string; uri?: string }, detail: RegExp) => {
      const offer = await wallet.sessions.issueNonce(local);
      let message = createSiweMessage({
        address: alice.account.address,
        chainId: offer.chainId,
        domain: offer.domain,
        nonce: offer.nonce,
        uri: offer.uri,
        version: '1',
        issuedAt: new Date(now),
        expirationTime: new Date(offer.expiresAt),
      });
      if (change.domain !== undefined) message = message.replace(`${offer.domain} wants`, `${change.domain} wants`);
      if (change.uri !== undefined) message = message.replace(`URI: ${offer.uri}\n`, `URI: ${change.uri}\n`);
      await expect(wallet.sessions.signIn(await signedBy(alice, message), local)).rejects.toMatchObject({
        code: 'invalid_siwe_message',
        message: expect.stringMatching(detail),
      });
    };
    // viem's reader does not even see a domain there: refused as ambiguous before the domain check.
    await refusedAt({ domain: '%31%32%37.0.0.1:8000' }, /can be read in more than one way|is for "%31%32%37.0.0.1:8000"/);
    await refusedAt({ domain: '0x7f000001:8000' }, /is for "0x7f000001:8000"/);
    await refusedAt({ uri: 'http://0x7f000001:8000/' }, /URI must be on http:\/\/127\.0\.0\.1:8000/);
    await refusedAt({ uri: 'http://%31%32%37.0.0.1:8000/' }, /URI must be on/);
    await refusedAt({ uri: 'http://user:pass@127.0.0.1:8000/' }, /URI must be on/);
    await refusedAt({ uri: 'http://127.0.0.1:8000@evil.example/' }, /URI must be on/);
    await refusedAt({ uri: 'http://127.0.0.1:80001/' }, /URI must be on/);
    const offer = await wallet.sessions.issueNonce(local);
    expect(offer).toMatchObject({ domain: '127.0.0.1:8000', uri: 'http://127.0.0.1:8000' });
    const message = createSiweMessage({
      address: alice.account.address,
      chainId: offer.chainId,
      domain: offer.domain,
      nonce: offer.nonce,
      uri: `${offer.uri}/login#top`,
      version: '1',
      issuedAt: new Date(now),
      expirationTime: new Date(offer.expiresAt),
    });
    await expect(wallet.sessions.signIn(await signedBy(alice, message), local)).resolves.toMatchObject({ address: alice.address });
    expect(await sessionCount()).toBe(1);
  });

  it('refuses impossible calendar dates (finding 8)', async () => {
    const { message } = await messageFor(alice, { expirationTime: new Date(now + 10 * minute) });
    const expiry = new Date(now + 10 * minute).toISOString();
    for (const impossible of ['2030-02-30T00:00:00.000Z', '2029-02-29T00:00:00Z', '2030-04-31T12:00:00Z', '2030-01-01T24:00:00Z', '2030-13-01T00:00:00Z']) {
      const changed = message.replace(`Expiration Time: ${expiry}`, `Expiration Time: ${impossible}`);
      expect(changed).not.toBe(message);
      await expect(wallet.sessions.signIn(await signedBy(alice, changed), site)).rejects.toMatchObject({
        code: 'invalid_siwe_message',
        message: expect.stringContaining('"Expiration Time" is not an RFC 3339 date-time'),
      });
    }
    // A real 29 February is a date.
    const leap = message.replace(`Expiration Time: ${expiry}`, 'Expiration Time: 2032-02-29T00:00:00Z');
    await expect(wallet.sessions.signIn(await signedBy(alice, leap), site)).resolves.toMatchObject({ address: alice.address });
  });

});
