import { type Address, getAddress, type Hex } from 'viem';
import { createSiweMessage } from 'viem/siwe';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { signingMessageFor } from '../../../../src/scoring/scores/nonces.service.js';
import { createTestApp, seedAccount, type TestApp } from '../../../helpers/app.js';
import { databaseKinds } from '../../../helpers/databases.js';
import { type Anvil, startAnvil, type TestWallet } from '../../../helpers/evm.js';
import { type RpcProbe, startRpcProbe } from '../../../helpers/rpc-probe.js';
import { type Counterfactual, setUpSmartWallets, type SmartWallets } from '../../../helpers/smart-wallets.js';

// Contract-wallet signatures through the HTTP API, on a real EVM: a submission signed by an
// ERC-1271 wallet and by a counterfactual ERC-6492 one, SIWE sign-in with both, and what a
// refused, unverifiable or unconfigured check leaves behind (the nonce, usable).

const NOT_CONFIGURED = 'smart-wallet (ERC-1271/ERC-6492) verification is not configured on this server';

let anvil: Anvil;
let w: SmartWallets;
let probe: RpcProbe;
let pending: Counterfactual;

beforeAll(async () => {
  anvil = await startAnvil();
  w = await setUpSmartWallets(anvil);
  pending = await w.counterfactual('http submissions');
  probe = await startRpcProbe(anvil.url);
}, 60_000);
afterAll(async () => {
  await probe?.close();
  await anvil?.stop();
});

describe.each(databaseKinds)('smart-wallet signatures over HTTP on %s', (kind) => {
  let t: TestApp;
  let key: string;
  let scorerId: number;

  /** A server whose contract checks go through the probe (unless `env` says otherwise). */
  async function start(env: Record<string, string> = {}): Promise<void> {
    await t?.close();
    t = await createTestApp(kind, {
      SUBMIT_WAIT_MS: '20000',
      SMART_WALLET_RPC_URL: probe.url,
      SMART_WALLET_RPC_TIMEOUT_MS: '10000',
      SIWE_ALLOWED_CHAIN_IDS: '31337,1',
      ...env,
    });
    t.ctx.worker.start();
    const seeded = await seedAccount(t.ctx);
    key = seeded.key;
    scorerId = seeded.scorer.id;
  }

  beforeEach(async () => {
    probe.mode = 'forward';
    await start();
  });
  afterEach(async () => {
    await t.close();
    t = undefined as unknown as TestApp;
  });

  async function signingMessage(): Promise<{ message: string; nonce: string }> {
    return (await t.app.inject({ url: '/registry/signing-message', headers: { 'x-api-key': key } })).json();
  }

  async function submit(body: Record<string, unknown>) {
    return t.app.inject({ method: 'POST', url: '/registry/submit-passport', headers: { 'x-api-key': key }, payload: body });
  }

  /** A submission of `address` with its signature over a fresh signing message, made by `sign`. */
  async function signedSubmission(address: Address, sign: (message: string) => Promise<Hex>) {
    const { message, nonce } = await signingMessage();
    return { address, scorer_id: String(scorerId), nonce, signature: await sign(message) };
  }

  const byOwner = (message: string) => w.owner.signMessage({ message });
  const byStranger = (message: string) => w.stranger.signMessage({ message });
  const wrapped = (signer: TestWallet) => async (message: string) => pending.wrap(await signer.signMessage({ message }));

  describe('submission', () => {
    it('scores an ERC-1271 wallet on its owner\'s signature; a stranger\'s is refused and leaves the nonce usable', async () => {
      const forged = await signedSubmission(w.deployed, byStranger);
      const refused = await submit(forged);
      expect(refused.statusCode).toBe(400);
      expect(refused.json()).toEqual({ code: 'invalid_signature', detail: expect.stringContaining('not made by the submitted address') });
      const genuine = { ...forged, signature: await byOwner(signingMessageFor(forged.nonce)) };
      const res = await submit(genuine);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ address: w.deployed.toLowerCase(), status: 'DONE', score: '0.00000' });
      // The nonce is spent now.
      expect((await submit(genuine)).json().code).toBe('invalid_nonce');
    });

    it('scores a counterfactual ERC-6492 wallet and leaves it undeployed; a stranger\'s wrapped signature is refused first', async () => {
      const forged = await signedSubmission(pending.address, wrapped(w.stranger));
      const refused = await submit(forged);
      expect(refused.statusCode).toBe(400);
      expect(refused.json().code).toBe('invalid_signature');
      const genuine = { ...forged, signature: pending.wrap(await byOwner(signingMessageFor(forged.nonce))) };
      expect(genuine.signature.length).toBeGreaterThan(200);
      const res = await submit(genuine);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ address: pending.address.toLowerCase(), status: 'DONE' });
      expect(await anvil.publicClient.getCode({ address: pending.address })).toBeUndefined();
    });

    it('answers 502 upstream_unavailable when the endpoint hangs or fails, and the same request passes afterwards', async () => {
      await start({ SMART_WALLET_RPC_TIMEOUT_MS: '300' });
      const body = await signedSubmission(w.deployed, byOwner);
      for (const mode of ['hang', 'http-500'] as const) {
        probe.mode = mode;
        const res = await submit(body);
        expect(res.statusCode).toBe(502);
        expect(res.json()).toEqual({ code: 'upstream_unavailable', detail: expect.stringContaining('smart-wallet signature') });
      }
      // Nothing was recorded for the address.
      expect((await t.app.inject({ url: `/registry/score/${scorerId}/${w.deployed}`, headers: { 'x-api-key': key } })).statusCode).toBe(404);
      probe.mode = 'forward';
      const res = await submit(body);
      expect(res.statusCode).toBe(200);
      expect(res.json().status).toBe('DONE');
    });

    it('two submissions racing with one nonce and a contract signature: one is scored, the other gets invalid_nonce', async () => {
      const body = await signedSubmission(w.deployed, byOwner);
      const answers = await Promise.all([submit(body), submit(body)]);
      const byStatus = answers.map((res) => [res.statusCode, res.json().code ?? res.json().status]).sort();
      expect(byStatus).toEqual([
        [200, 'DONE'],
        [400, 'invalid_nonce'],
      ]);
    });

    it('without an endpoint refuses a contract signature as "not configured", and EOAs still pass', async () => {
      await start({ SMART_WALLET_RPC_URL: 'off' });
      const before = probe.requests;
      for (const body of [await signedSubmission(w.deployed, byOwner), await signedSubmission(pending.address, wrapped(w.owner))]) {
        const res = await submit(body);
        expect(res.statusCode).toBe(400);
        expect(res.json()).toEqual({ code: 'invalid_signature', detail: expect.stringContaining(NOT_CONFIGURED) });
      }
      const eoa = await submit(await signedSubmission(w.owner.account.address, byOwner));
      expect(eoa.statusCode).toBe(200);
      expect(probe.requests).toBe(before);
    });

    it('refuses a signature over the cap before looking the nonce up or asking the endpoint', async () => {
      await start({ SMART_WALLET_MAX_SIGNATURE_BYTES: '100' });
      const before = probe.requests;
      const body = await signedSubmission(pending.address, wrapped(w.owner));
      const res = await submit({ ...body, nonce: 'f'.repeat(64) });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ code: 'invalid_signature', detail: expect.stringContaining('1 to 100 bytes') });
      expect(probe.requests).toBe(before);
      // Past the schema's own limit, the body is refused as a whole.
      const huge = await submit({ ...body, signature: `0x${'ab'.repeat(8193)}` });
      expect(huge.statusCode).toBe(400);
    });
  });

  describe('SIWE sign-in', () => {
    async function siweFor(address: Address, chainId?: number) {
      const offer = (await t.app.inject({ url: '/registry/wallet/siwe-nonce' })).json();
      return createSiweMessage({
        address: getAddress(address),
        chainId: chainId ?? offer.chainId,
        domain: offer.domain,
        nonce: offer.nonce,
        uri: offer.uri,
        statement: offer.statement,
        version: '1',
        issuedAt: new Date(),
        expirationTime: new Date(offer.expiresAt),
      });
    }

    async function postSession(body: { message: string; signature: string }) {
      return t.app.inject({ method: 'POST', url: '/registry/wallet/session', payload: body });
    }

    it('signs in an ERC-1271 wallet and a counterfactual ERC-6492 one; a stranger\'s signature leaves the nonce usable', async () => {
      for (const [address, sign] of [
        [w.deployed, byOwner],
        [pending.address, wrapped(w.owner)],
      ] as const) {
        const message = await siweFor(address);
        const forged = await postSession({ message, signature: await (address === w.deployed ? byStranger : wrapped(w.stranger))(message) });
        expect(forged.statusCode).toBe(400);
        expect(forged.json()).toEqual({ code: 'invalid_signature', detail: expect.stringContaining('not made by the message\'s address') });
        const res = await postSession({ message, signature: await sign(message) });
        expect(res.statusCode).toBe(200);
        const session = res.json();
        expect(session.address).toBe(address.toLowerCase());
        // The session writes that wallet's stamps.
        const list = await t.app.inject({ url: '/registry/wallet/stamps', headers: { authorization: `Bearer ${session.token}` } });
        expect(list.json()).toEqual({ address: address.toLowerCase(), items: [] });
      }
      expect(await anvil.publicClient.getCode({ address: pending.address })).toBeUndefined();
    });

    it('refuses a contract wallet whose message names another chain than the endpoint\'s, and the nonce stays usable', async () => {
      const onMainnet = await siweFor(w.deployed, 1);
      const res = await postSession({ message: onMainnet, signature: await byOwner(onMainnet) });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ code: 'invalid_signature', detail: expect.stringContaining('Chain ID 1') });
      expect(res.json().detail).toContain('chain 31337');
      // An EOA may name any allowed chain.
      const eoaMessage = await siweFor(w.owner.account.address, 1);
      expect((await postSession({ message: eoaMessage, signature: await byOwner(eoaMessage) })).statusCode).toBe(200);
      // The refused message's nonce was not consumed: the right chain with it signs in.
      const nonce = /Nonce: (\w+)/.exec(onMainnet)![1]!;
      const fixed = onMainnet.replace('Chain ID: 1\n', 'Chain ID: 31337\n');
      expect(fixed).toContain(`Nonce: ${nonce}`);
      expect((await postSession({ message: fixed, signature: await byOwner(fixed) })).statusCode).toBe(200);
    });

    it('answers 502 when the endpoint hangs (the nonce survives it), and 400 "not configured" without one', async () => {
      await start({ SMART_WALLET_RPC_TIMEOUT_MS: '300' });
      const message = await siweFor(pending.address);
      const body = { message, signature: await wrapped(w.owner)(message) };
      probe.mode = 'hang';
      const res = await postSession(body);
      expect(res.statusCode).toBe(502);
      expect(res.json().code).toBe('upstream_unavailable');
      probe.mode = 'forward';
      expect((await postSession(body)).statusCode).toBe(200);

      await start({ SMART_WALLET_RPC_URL: 'off' });
      const unconfigured = await siweFor(w.deployed);
      const refused = await postSession({ message: unconfigured, signature: await byOwner(unconfigured) });
      expect(refused.statusCode).toBe(400);
      expect(refused.json()).toEqual({ code: 'invalid_signature', detail: expect.stringContaining(NOT_CONFIGURED) });
    });
  });
});
