import type { Hex } from 'viem';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  DEFAULT_MAX_SIGNATURE_BYTES,
  isUpstreamFailure,
  type VerifyWalletSignatureInput,
  verifyWalletSignature,
  type WalletSignatureResult,
} from '../../src/chain/wallet-signatures.js';
import { type Anvil, freePort, startAnvil } from '../helpers/evm.js';
import { type RpcProbe, startRpcProbe } from '../helpers/rpc-probe.js';
import { type Counterfactual, ERC6492_SUFFIX, setUpSmartWallets, type SmartWallets } from '../helpers/smart-wallets.js';

// What happens before and around the node: shape checks that never reach it, and an
// endpoint that hangs, is down or errs, each told apart from an invalid signature.

const MESSAGE = 'Sign in to Stampgate.';

let anvil: Anvil;
let w: SmartWallets;
let probe: RpcProbe;
let pending: Counterfactual;
let ownerSig: Hex;

beforeAll(async () => {
  anvil = await startAnvil();
  w = await setUpSmartWallets(anvil);
  pending = await w.counterfactual('failures');
  probe = await startRpcProbe(anvil.url);
  ownerSig = await w.owner.signMessage({ message: MESSAGE });
}, 60_000);
afterAll(async () => {
  await probe?.close();
  await anvil?.stop();
});
beforeEach(() => {
  probe.mode = 'forward';
});

function failure(result: WalletSignatureResult): { reason: string; detail: string } {
  if (result.valid) throw new Error(`expected a failure, got ${JSON.stringify(result)}`);
  return result;
}

describe('shape checks come first and never reach the endpoint', () => {
  it('refuses malformed addresses, messages, hashes and signatures without a request', async () => {
    const rpc = { url: probe.url, timeoutMs: 10_000 };
    const address = w.deployed;
    const cases: [VerifyWalletSignatureInput, string][] = [
      [{ address: '0x1234', message: MESSAGE, signature: ownerSig, rpc }, 'invalid_address'],
      [{ address: `0x${'0'.repeat(40)}`, message: MESSAGE, signature: ownerSig, rpc }, 'invalid_address'],
      [{ address: `${address}00`, message: MESSAGE, signature: ownerSig, rpc }, 'invalid_address'],
      [{ address, message: MESSAGE, signature: 'not hex', rpc }, 'malformed_signature'],
      [{ address, message: MESSAGE, signature: '0x', rpc }, 'malformed_signature'],
      [{ address, message: MESSAGE, signature: `${ownerSig}0`, rpc }, 'malformed_signature'],
      [{ address, message: MESSAGE, signature: ownerSig.slice(2), rpc }, 'malformed_signature'],
      [{ address, message: MESSAGE, signature: `0x${'00'.repeat(DEFAULT_MAX_SIGNATURE_BYTES + 1)}`, rpc }, 'malformed_signature'],
      [{ address, message: MESSAGE, signature: ownerSig, rpc, maxSignatureBytes: 64 }, 'malformed_signature'],
      // The ERC-6492 suffix on bytes that do not decode as (address, bytes, bytes).
      [{ address, message: MESSAGE, signature: `0x${'ff'.repeat(40)}${ERC6492_SUFFIX.slice(2)}`, rpc }, 'malformed_signature'],
      // ERC-8010 is a fourth kind, not accepted.
      [{ address, message: MESSAGE, signature: `${ownerSig}${'8010'.repeat(16)}`, rpc }, 'unsupported_signature'],
      [{ address, hash: '0x1234', signature: ownerSig, rpc }, 'malformed_hash'],
      [{ address, message: MESSAGE, hash: `0x${'11'.repeat(32)}`, signature: ownerSig, rpc } as unknown as VerifyWalletSignatureInput, 'malformed_message'],
      [{ address, signature: ownerSig, rpc } as unknown as VerifyWalletSignatureInput, 'malformed_message'],
      [{ address, message: 42, signature: ownerSig, rpc } as unknown as VerifyWalletSignatureInput, 'malformed_message'],
    ];
    for (const [input, reason] of cases) {
      expect(failure(await verifyWalletSignature(input)).reason, JSON.stringify(input).slice(0, 120)).toBe(reason);
    }
    expect(probe.requests).toBe(0);
  });

  it('a signature of exactly the limit is asked about (and the validator\'s revert on it is a mismatch, not endpoint trouble)', async () => {
    const rpc = { url: probe.url, timeoutMs: 10_000 };
    const signature = `0x${'00'.repeat(DEFAULT_MAX_SIGNATURE_BYTES)}`;
    const before = probe.requests;
    for (const address of [w.deployed, w.owner.account.address]) {
      expect(failure(await verifyWalletSignature({ address, message: MESSAGE, signature, rpc })).reason).toBe('signature_mismatch');
    }
    expect(probe.requests).toBeGreaterThan(before);
  });
});

describe('endpoint trouble is not "invalid"', () => {
  it('an endpoint that never answers gives rpc_timeout within the time limit, and EOA signatures still pass at once', async () => {
    probe.mode = 'hang';
    const rpc = { url: probe.url, timeoutMs: 500 };
    for (const [address, signature, limit] of [
      [w.deployed, ownerSig, 500],
      [pending.address, pending.wrap(ownerSig), 500],
      [w.deployed, ownerSig, 1500],
    ] as const) {
      const started = performance.now();
      const result = failure(await verifyWalletSignature({ address, message: MESSAGE, signature, rpc: { ...rpc, timeoutMs: limit } }));
      const elapsed = performance.now() - started;
      expect(result.reason).toBe('rpc_timeout');
      expect(isUpstreamFailure('rpc_timeout')).toBe(true);
      // At least most of the limit (it did wait), and not much past it (generous margin: the machine is shared).
      expect(elapsed).toBeGreaterThanOrEqual(limit - 50);
      expect(elapsed).toBeLessThan(limit + 2_000);
    }
    const asked = probe.requests;
    const eoaStarted = performance.now();
    expect(await verifyWalletSignature({ address: w.owner.account.address, message: MESSAGE, signature: ownerSig, rpc })).toEqual({
      valid: true,
      kind: 'eoa',
    });
    // Decided locally: the hanging endpoint got no request and nobody waited for it.
    expect(probe.requests).toBe(asked);
    expect(performance.now() - eoaStarted).toBeLessThan(rpc.timeoutMs);
  });

  it('an endpoint that is down, answers HTTP 500 or a JSON-RPC error gives rpc_unavailable, naming only its origin', async () => {
    const down = `http://127.0.0.1:${await freePort()}/v3/secret-api-key`;
    const results: { reason: string; detail: string }[] = [];
    results.push(failure(await verifyWalletSignature({ address: w.deployed, message: MESSAGE, signature: ownerSig, rpc: { url: down, timeoutMs: 5_000 } })));
    for (const mode of ['http-500', 'rpc-error'] as const) {
      probe.mode = mode;
      const rpc = { url: `${probe.url}/v3/secret-api-key`, timeoutMs: 5_000 };
      results.push(failure(await verifyWalletSignature({ address: w.deployed, message: MESSAGE, signature: ownerSig, rpc })));
      results.push(failure(await verifyWalletSignature({ address: pending.address, message: MESSAGE, signature: pending.wrap(ownerSig), rpc })));
    }
    for (const result of results) {
      expect(result.reason).toBe('rpc_unavailable');
      expect(isUpstreamFailure('rpc_unavailable')).toBe(true);
      expect(result.detail).toMatch(/^The Ethereum RPC endpoint http:\/\/127\.0\.0\.1:\d+ could not verify the smart-wallet signature: /);
      expect(result.detail).not.toContain('secret-api-key');
    }
    expect(results[1]!.detail).toContain('HTTP 500');
    expect(results[3]!.detail).toContain('answered with an error');
  });

  it('signature failures are not upstream failures', () => {
    for (const reason of ['signature_mismatch', 'smart_wallet_not_configured', 'malformed_signature', 'non_canonical_signature'] as const) {
      expect(isUpstreamFailure(reason)).toBe(false);
    }
  });
});
