import type { FastifyInstance } from 'fastify';
import { createSiweMessage } from 'viem/siwe';
import { expect } from 'vitest';
import type { testWallet } from '../helpers/stamps.js';

type Wallet = ReturnType<typeof testWallet>;

/** What `app.inject` needs to act as a signed-in portal page: the cookie, the CSRF token, the Origin. */
export interface PortalLogin {
  cookie: string;
  csrf: string;
  accountId: number;
  setCookie: string;
}

export const ORIGIN = 'http://localhost';

export async function signedPortalMessage(app: FastifyInstance, who: Wallet, overrides: Partial<Parameters<typeof createSiweMessage>[0]> = {}) {
  const offer = (await app.inject({ method: 'GET', url: '/v2/account/siwe-nonce' })).json();
  const message = createSiweMessage({
    address: who.account.address,
    chainId: offer.chainId,
    domain: offer.domain,
    nonce: offer.nonce,
    uri: offer.uri,
    statement: offer.statement,
    version: '1',
    issuedAt: new Date(),
    expirationTime: new Date(offer.expiresAt),
    ...overrides,
  });
  return { message, signature: await who.account.signMessage({ message }) };
}

export async function portalSignIn(app: FastifyInstance, who: Wallet): Promise<PortalLogin> {
  const res = await app.inject({ method: 'POST', url: '/v2/account/session', payload: await signedPortalMessage(app, who) });
  expect(res.statusCode, res.body).toBe(200);
  const setCookie = String(res.headers['set-cookie']);
  const cookie = setCookie.split(';')[0]!;
  return { cookie, csrf: res.json().csrf_token, accountId: Number(res.json().account_id), setCookie };
}

/** A request of the signed-in page: cookie, and on changes the CSRF token and this origin. */
export function asPortal(login: PortalLogin, method: 'GET' | 'POST' | 'PATCH' | 'DELETE') {
  return method === 'GET' ? { cookie: login.cookie } : { cookie: login.cookie, 'x-csrf-token': login.csrf, origin: ORIGIN };
}
