import { type Address, getAddress, type Hex, parseSignature, serializeCompactSignature, signatureToCompactSignature } from 'viem';
import { createSiweMessage } from 'viem/siwe';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type SmartWalletRpc, verifyWalletSignature } from '../../src/chain/wallet-signatures.js';
import { signingMessageFor } from '../../src/scoring/nonces.js';
import { type Anvil, startAnvil, type TestWallet } from '../helpers/evm.js';
import { type RpcProbe, startRpcProbe } from '../helpers/rpc-probe.js';
import { type Counterfactual, ERC6492_SUFFIX, setUpSmartWallets, type SmartWallets } from '../helpers/smart-wallets.js';

// Three kinds of wallet signature on a real EVM: EOA, ERC-1271 (deployed contract wallet)
// and ERC-6492 (counterfactual wallet), over the submission signing message and SIWE text.

const CURVE_ORDER = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const SIGNING_MESSAGE = signingMessageFor('5e'.repeat(32));

let anvil: Anvil;
let w: SmartWallets;
let probe: RpcProbe;
let rpc: SmartWalletRpc;
let pending: Counterfactual;

/** A Sign-In with Ethereum message naming `address` (the wallet, not its owner key). */
function siweFor(address: Address): string {
  return createSiweMessage({
    address: getAddress(address),
    chainId: 31337,
    domain: 'stampgate.example',
    uri: 'https://stampgate.example/portal',
    version: '1',
    nonce: 'k3RjYw9xQ2mPz7Ls',
    statement: 'Sign in to Stampgate.',
    issuedAt: new Date('2026-11-25T10:00:00Z'),
  });
}

const sign = (signer: TestWallet, message: string) => signer.signMessage({ message });

beforeAll(async () => {
  anvil = await startAnvil();
  w = await setUpSmartWallets(anvil);
  pending = await w.counterfactual('never deployed');
  probe = await startRpcProbe(anvil.url);
  rpc = { url: probe.url, timeoutMs: 10_000 };
}, 60_000);
afterAll(async () => {
  await probe?.close();
  await anvil?.stop();
});
beforeEach(() => {
  probe.mode = 'forward';
});

describe('EOA signatures', () => {
  it('pass for the signing message and a SIWE message, with or without an endpoint, and never ask the node', async () => {
    const owner = w.owner.account.address;
    for (const message of [SIGNING_MESSAGE, siweFor(owner)]) {
      const signature = await sign(w.owner, message);
      expect(await verifyWalletSignature({ address: owner, message, signature })).toEqual({ valid: true, kind: 'eoa' });
      expect(await verifyWalletSignature({ address: owner.toLowerCase(), message, signature, rpc })).toEqual({ valid: true, kind: 'eoa' });
    }
    // A 32-byte hash signed directly, and the EIP-2098 compact form of a message signature.
    const hash = `0x${'ab'.repeat(32)}` as Hex;
    const signedHash = await w.owner.account.sign!({ hash });
    expect(await verifyWalletSignature({ address: owner, hash, signature: signedHash })).toEqual({ valid: true, kind: 'eoa' });
    const compact = serializeCompactSignature(signatureToCompactSignature(parseSignature(await sign(w.owner, SIGNING_MESSAGE))));
    expect(compact.length).toBe(2 + 128);
    expect(await verifyWalletSignature({ address: owner, message: SIGNING_MESSAGE, signature: compact, rpc })).toEqual({ valid: true, kind: 'eoa' });
    // Hex digits in upper case are the same bytes.
    const upper = `0x${(await sign(w.owner, SIGNING_MESSAGE)).slice(2).toUpperCase()}`;
    expect(await verifyWalletSignature({ address: owner, message: SIGNING_MESSAGE, signature: upper, rpc })).toEqual({ valid: true, kind: 'eoa' });
    expect(probe.requests).toBe(0);
  });

  it('a wrong signer is refused: not configured without an endpoint, a mismatch with one', async () => {
    const owner = w.owner.account.address;
    const signature = await sign(w.stranger, SIGNING_MESSAGE);
    expect(await verifyWalletSignature({ address: owner, message: SIGNING_MESSAGE, signature })).toMatchObject({
      valid: false,
      reason: 'smart_wallet_not_configured',
    });
    expect(await verifyWalletSignature({ address: owner, message: SIGNING_MESSAGE, signature, rpc })).toMatchObject({
      valid: false,
      reason: 'signature_mismatch',
    });
    // The same signature checked against the message it was not made for.
    const other = await sign(w.owner, siweFor(owner));
    expect(await verifyWalletSignature({ address: owner, message: SIGNING_MESSAGE, signature: other, rpc })).toMatchObject({
      valid: false,
      reason: 'signature_mismatch',
    });
  });

  it('the high-s mirror of the owner\'s signature is refused before any RPC, though ecrecover on chain would accept it', async () => {
    const owner = w.owner.account.address;
    const { r, s, yParity } = parseSignature(await sign(w.owner, SIGNING_MESSAGE));
    const highS = (CURVE_ORDER - BigInt(s)).toString(16).padStart(64, '0');
    const mirrored = `${r}${highS}${(28 - yParity).toString(16)}` as Hex;
    const before = probe.requests;
    expect(await verifyWalletSignature({ address: owner, message: SIGNING_MESSAGE, signature: mirrored, rpc })).toMatchObject({
      valid: false,
      reason: 'non_canonical_signature',
    });
    expect(probe.requests).toBe(before);
  });
});

describe('ERC-1271: a deployed contract wallet', () => {
  it('passes with its owner\'s signature of the signing message and of a SIWE message naming the wallet', async () => {
    for (const message of [SIGNING_MESSAGE, siweFor(w.deployed)]) {
      const signature = await sign(w.owner, message);
      expect(await verifyWalletSignature({ address: w.deployed, message, signature, rpc })).toEqual({ valid: true, kind: 'erc1271' });
    }
  });

  it('takes the address in any letter case, a bad checksum included', async () => {
    const signature = await sign(w.owner, SIGNING_MESSAGE);
    const upper = `0x${w.deployed.slice(2).toUpperCase()}`;
    for (const address of [upper, w.deployed.toLowerCase(), getAddress(w.deployed)]) {
      expect(await verifyWalletSignature({ address, message: SIGNING_MESSAGE, signature, rpc })).toEqual({ valid: true, kind: 'erc1271' });
    }
  });

  it('a stranger\'s signature is a mismatch; without an endpoint the owner\'s is "not configured"', async () => {
    for (const message of [SIGNING_MESSAGE, siweFor(w.deployed)]) {
      const forged = await sign(w.stranger, message);
      expect(await verifyWalletSignature({ address: w.deployed, message, signature: forged, rpc })).toMatchObject({
        valid: false,
        reason: 'signature_mismatch',
      });
      const genuine = await sign(w.owner, message);
      const result = await verifyWalletSignature({ address: w.deployed, message, signature: genuine });
      expect(result).toMatchObject({ valid: false, reason: 'smart_wallet_not_configured' });
      expect(result.valid === false && result.detail).toContain('smart-wallet (ERC-1271/ERC-6492) verification is not configured');
    }
  });

  it('the owner\'s signature does not speak for another address', async () => {
    const signature = await sign(w.owner, SIGNING_MESSAGE);
    expect(await verifyWalletSignature({ address: w.factory, message: SIGNING_MESSAGE, signature, rpc })).toMatchObject({
      valid: false,
      reason: 'signature_mismatch',
    });
  });
});

describe('ERC-6492: a counterfactual wallet', () => {
  it('passes with the owner\'s signature wrapped with the factory call, and stays undeployed', async () => {
    expect(await anvil.publicClient.getCode({ address: pending.address })).toBeUndefined();
    for (const message of [SIGNING_MESSAGE, siweFor(pending.address)]) {
      const wrapped = pending.wrap(await sign(w.owner, message));
      expect(wrapped.endsWith(ERC6492_SUFFIX.slice(2))).toBe(true);
      expect(await verifyWalletSignature({ address: pending.address, message, signature: wrapped, rpc })).toEqual({
        valid: true,
        kind: 'erc6492',
      });
    }
    const upper = `0x${pending.wrap(await sign(w.owner, SIGNING_MESSAGE)).slice(2).toUpperCase()}`;
    expect(await verifyWalletSignature({ address: pending.address, message: SIGNING_MESSAGE, signature: upper, rpc })).toEqual({
      valid: true,
      kind: 'erc6492',
    });
    // Verification is an eth_call: nothing was deployed by it.
    expect(await anvil.publicClient.getCode({ address: pending.address })).toBeUndefined();
  });

  it('a stranger\'s wrapped signature, or the owner\'s unwrapped one, is a mismatch', async () => {
    for (const message of [SIGNING_MESSAGE, siweFor(pending.address)]) {
      const forged = pending.wrap(await sign(w.stranger, message));
      expect(await verifyWalletSignature({ address: pending.address, message, signature: forged, rpc })).toMatchObject({
        valid: false,
        reason: 'signature_mismatch',
      });
      const bare = await sign(w.owner, message);
      expect(await verifyWalletSignature({ address: pending.address, message, signature: bare, rpc })).toMatchObject({
        valid: false,
        reason: 'signature_mismatch',
      });
    }
  });

  it('a wrapped signature checked against another address is a mismatch', async () => {
    const other = await w.counterfactual('another wallet');
    const wrapped = pending.wrap(await sign(w.owner, SIGNING_MESSAGE));
    expect(await verifyWalletSignature({ address: other.address, message: SIGNING_MESSAGE, signature: wrapped, rpc })).toMatchObject({
      valid: false,
      reason: 'signature_mismatch',
    });
  });

  it('without an endpoint the genuine wrapped signature is "not configured"', async () => {
    const wrapped = pending.wrap(await sign(w.owner, SIGNING_MESSAGE));
    expect(await verifyWalletSignature({ address: pending.address, message: SIGNING_MESSAGE, signature: wrapped })).toMatchObject({
      valid: false,
      reason: 'smart_wallet_not_configured',
    });
  });

  it('once the factory deployed the wallet, the wrapped signature still passes and the bare one passes as ERC-1271', async () => {
    const later = await w.counterfactual('deployed later');
    const bare = await sign(w.owner, SIGNING_MESSAGE);
    const wrapped = later.wrap(bare);
    const check = (signature: Hex) => verifyWalletSignature({ address: later.address, message: SIGNING_MESSAGE, signature, rpc });
    expect(await check(bare)).toMatchObject({ valid: false, reason: 'signature_mismatch' });
    await later.deploy();
    expect(await anvil.publicClient.getCode({ address: later.address })).toMatch(/^0x[0-9a-f]+$/);
    expect(await check(wrapped)).toEqual({ valid: true, kind: 'erc6492' });
    expect(await check(bare)).toEqual({ valid: true, kind: 'erc1271' });
    expect(await check(later.wrap(await sign(w.stranger, SIGNING_MESSAGE)))).toMatchObject({ valid: false, reason: 'signature_mismatch' });
  });
});
