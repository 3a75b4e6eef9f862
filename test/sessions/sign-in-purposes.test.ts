import type { Hex } from 'viem';
import { createSiweMessage } from 'viem/siwe';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { databaseKinds } from '../helpers/databases.js';
import { testWallet } from '../helpers/stamps.js';

const alice = testWallet(451);

const PORTAL = { nonce: '/v2/account/siwe-nonce', session: '/v2/account/session' };
const WALLET = { nonce: '/registry/wallet/siwe-nonce', session: '/registry/wallet/session' };
type Flow = typeof PORTAL;

interface Offer {
  nonce: string;
  domain: string;
  uri: string;
  chainId: number;
  statement: string;
  expiresAt: string;
}

// A phishing page can fetch a nonce of one flow and have the wallet sign it under the statement
// and URI of another (the one the owner thinks they are signing in to): each flow must refuse that.
describe.each(databaseKinds)('a sign-in message opens only the flow it was signed for, on %s', (kind) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp(kind);
  });
  afterEach(async () => t.close());

  const offerOf = async (flow: Flow): Promise<Offer> => (await t.app.inject({ method: 'GET', url: flow.nonce })).json();

  async function signed(nonceOf: Offer, shownAs: Offer) {
    const message = createSiweMessage({
      address: alice.account.address as Hex,
      chainId: nonceOf.chainId,
      domain: nonceOf.domain,
      nonce: nonceOf.nonce,
      uri: shownAs.uri,
      statement: shownAs.statement,
      version: '1',
      issuedAt: new Date(),
      expirationTime: new Date(nonceOf.expiresAt),
    });
    return { message, signature: await alice.account.signMessage({ message }) };
  }

  const post = (flow: Flow, payload: object) => t.app.inject({ method: 'POST', url: flow.session, payload });

  for (const [name, target, other] of [
    ['the portal', PORTAL, WALLET],
    ['the wallet', WALLET, PORTAL],
  ] as const) {
    it(`${name} sign-in refuses its own nonce under the other flow's statement and URI, and consumes nothing`, async () => {
      const own = await offerOf(target);
      const foreign = await offerOf(other);
      const refused = await post(target, await signed(own, foreign));
      expect(refused.statusCode, refused.body).toBe(400);
      expect(Object.keys(refused.json()).sort()).toEqual(['code', 'detail']);
      expect(refused.json().code).toBe('invalid_siwe_message');
      expect(refused.headers['set-cookie']).toBeUndefined();
      // The other flow's URI alone, under this flow's statement, is refused too where the flow has a URI of its own.
      if (target === PORTAL) {
        const uriOnly = await post(target, await signed(own, { ...foreign, statement: own.statement }));
        expect(uriOnly.json().code).toBe('invalid_siwe_message');
      }
      // The nonce is still usable by a message that says what it is for.
      expect((await post(target, await signed(own, own))).statusCode).toBe(200);
    });

    it(`a nonce issued by ${name} sign-in cannot be used by the other flow`, async () => {
      const own = await offerOf(target);
      const refused = await post(other, await signed(own, await offerOf(other)));
      expect(refused.statusCode, refused.body).toBe(400);
      expect(refused.json()).toEqual({ detail: expect.any(String), code: 'invalid_nonce' });
      expect((await post(target, await signed(own, own))).statusCode).toBe(200);
    });
  }

  it('the portal sign-in needs its statement', async () => {
    const own = await offerOf(PORTAL);
    const message = (await signed(own, own)).message.replace(`${own.statement}\n\n`, '');
    const refused = await post(PORTAL, { message, signature: await alice.account.signMessage({ message }) });
    expect(refused.statusCode, refused.body).toBe(400);
    expect(refused.json().code).toBe('invalid_siwe_message');
  });
});
