import { type Address, getAddress } from 'viem';
import { createSiweMessage } from 'viem/siwe';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { databaseKinds } from '../helpers/databases.js';
import { type Anvil, startAnvil } from '../helpers/evm.js';
import { type Counterfactual, setUpSmartWallets, type SmartWallets } from '../helpers/smart-wallets.js';

// The portal's sign-in with contract wallets on a real EVM: an ERC-1271 wallet and a
// counterfactual ERC-6492 one each sign in and own an account; a stranger's signature does not.

let anvil: Anvil;
let w: SmartWallets;
let pending: Counterfactual;

beforeAll(async () => {
  anvil = await startAnvil();
  w = await setUpSmartWallets(anvil);
  pending = await w.counterfactual('portal sign-in');
}, 60_000);
afterAll(async () => anvil?.stop());

describe.each(databaseKinds)('portal sign-in with smart wallets on %s', (kind) => {
  let t: TestApp;
  afterEach(async () => t.close());

  async function messageFor(address: Address) {
    const offer = (await t.app.inject({ url: '/v2/account/siwe-nonce' })).json();
    return createSiweMessage({
      address: getAddress(address),
      chainId: offer.chainId,
      domain: offer.domain,
      nonce: offer.nonce,
      uri: offer.uri,
      statement: offer.statement,
      version: '1',
      issuedAt: new Date(),
      expirationTime: new Date(offer.expiresAt),
    });
  }
  const signIn = (message: string, signature: string) => t.app.inject({ method: 'POST', url: '/v2/account/session', payload: { message, signature } });

  it('signs in a deployed ERC-1271 wallet and a counterfactual ERC-6492 one, each owning its account', async () => {
    t = await createTestApp(kind, { SMART_WALLET_RPC_URL: anvil.url, SIWE_ALLOWED_CHAIN_IDS: '31337' });
    const cases = [
      { address: w.deployed, sign: (m: string) => w.owner.signMessage({ message: m }), forge: (m: string) => w.stranger.signMessage({ message: m }) },
      { address: pending.address, sign: async (m: string) => pending.wrap(await w.owner.signMessage({ message: m })), forge: async (m: string) => pending.wrap(await w.stranger.signMessage({ message: m })) },
    ];
    for (const { address, sign, forge } of cases) {
      const message = await messageFor(address);
      const forged = await signIn(message, await forge(message));
      expect(forged.statusCode).toBe(400);
      expect(forged.json().code).toBe('invalid_signature');
      // The refused attempt consumed nothing: the same message signs in.
      const res = await signIn(message, await sign(message));
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().address).toBe(address.toLowerCase());
      expect((await t.ctx.accounts.accountOfOwner(address.toLowerCase()))?.id).toBe(Number(res.json().account_id));
    }
    expect(await anvil.publicClient.getCode({ address: pending.address })).toBeUndefined();
  });

  it('refuses a contract wallet\'s signature when no smart-wallet endpoint is configured', async () => {
    t = await createTestApp(kind, { SMART_WALLET_RPC_URL: 'off', SIWE_ALLOWED_CHAIN_IDS: '31337' });
    const message = await messageFor(w.deployed);
    const res = await signIn(message, await w.owner.signMessage({ message }));
    expect(res.statusCode).toBe(400);
    expect(res.json().detail).toContain('not configured');
    expect(await t.ctx.accounts.listAccounts()).toEqual([]);
  });
});
