import { getAddress, type Hex } from 'viem';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SIGNATURE_MAX_LENGTH, walletOwnership, type WalletOwnership } from '../../src/chain/wallet-ownership.js';
import { DEFAULT_MAX_SIGNATURE_BYTES } from '../../src/chain/wallet-signatures.js';
import { ConfigError, loadConfig } from '../../src/config/index.js';
import { AppError } from '../../src/errors.js';
import { type Anvil, startAnvil } from '../helpers/evm.js';
import { type RpcProbe, startRpcProbe } from '../helpers/rpc-probe.js';
import { type Counterfactual, setUpSmartWallets, type SmartWallets } from '../helpers/smart-wallets.js';

// The ownership proof every caller uses, on a real EVM behind a controllable endpoint:
// the outcomes of the signature check mapped to the service's errors, and the chain-id rule.

const MESSAGE = 'I own this wallet.';

let anvil: Anvil;
let w: SmartWallets;
let probe: RpcProbe;
let pending: Counterfactual;
let ownerSig: Hex;
let strangerSig: Hex;

const settings = (url: string | null, timeoutMs = 10_000) => ({
  smartWalletRpcUrl: url,
  smartWalletRpcTimeoutMs: timeoutMs,
  smartWalletMaxSignatureBytes: DEFAULT_MAX_SIGNATURE_BYTES,
});

/** The AppError a proof was refused with. */
async function refusal(ownership: WalletOwnership, proof: Parameters<WalletOwnership['proveWalletOwnership']>[0]): Promise<AppError> {
  try {
    await ownership.proveWalletOwnership(proof);
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  throw new Error('expected the proof to be refused');
}

beforeAll(async () => {
  anvil = await startAnvil();
  w = await setUpSmartWallets(anvil);
  pending = await w.counterfactual('ownership');
  probe = await startRpcProbe(anvil.url);
  ownerSig = await w.owner.signMessage({ message: MESSAGE });
  strangerSig = await w.stranger.signMessage({ message: MESSAGE });
}, 60_000);
afterAll(async () => {
  await probe?.close();
  await anvil?.stop();
});
beforeEach(() => {
  probe.mode = 'forward';
});

describe('proveWalletOwnership', () => {
  it('proves the three kinds through the endpoint, and an EOA without asking it', async () => {
    const ownership = walletOwnership(settings(probe.url));
    const before = probe.requests;
    await expect(ownership.proveWalletOwnership({ address: w.owner.account.address, message: MESSAGE, signature: ownerSig })).resolves.toEqual({ kind: 'eoa' });
    expect(probe.requests).toBe(before);
    await expect(ownership.proveWalletOwnership({ address: w.deployed, message: MESSAGE, signature: ownerSig })).resolves.toEqual({ kind: 'erc1271' });
    await expect(
      ownership.proveWalletOwnership({ address: pending.address.toLowerCase(), message: MESSAGE, signature: pending.wrap(ownerSig) }),
    ).resolves.toEqual({ kind: 'erc6492' });
    expect(probe.requests).toBeGreaterThan(before);
    // Checked by eth_call: the counterfactual wallet is still not deployed.
    expect(await anvil.publicClient.getCode({ address: pending.address })).toBeUndefined();
  });

  it('refuses a wrong signer of each kind with 400 invalid_signature, in the caller\'s words', async () => {
    const ownership = walletOwnership(settings(probe.url));
    for (const [address, signature] of [
      [w.owner.account.address, strangerSig],
      [w.deployed, strangerSig],
      [pending.address, pending.wrap(strangerSig)],
    ] as const) {
      const error = await refusal(ownership, { address, message: MESSAGE, signature, signedBy: 'the wallet over the test text' });
      expect(error.status).toBe(400);
      expect(error.code).toBe('invalid_signature');
      expect(error.message).toContain('not made by the wallet over the test text');
    }
  });

  it('without an endpoint, passes EOAs and refuses contract signatures with "not configured"', async () => {
    const ownership = walletOwnership(settings(null));
    expect(ownership.smartWalletsEnabled).toBe(false);
    await expect(ownership.proveWalletOwnership({ address: w.owner.account.address, message: MESSAGE, signature: ownerSig })).resolves.toEqual({ kind: 'eoa' });
    for (const [address, signature] of [
      [w.deployed, ownerSig],
      [pending.address, pending.wrap(ownerSig)],
    ] as const) {
      const error = await refusal(ownership, { address, message: MESSAGE, signature });
      expect(error.status).toBe(400);
      expect(error.code).toBe('invalid_signature');
      expect(error.message).toContain('smart-wallet (ERC-1271/ERC-6492) verification is not configured on this server');
    }
  });

  it('answers 502 upstream_unavailable when the endpoint hangs past the limit, errs or is down', async () => {
    const ownership = walletOwnership(settings(probe.url, 300));
    for (const mode of ['hang', 'http-500'] as const) {
      probe.mode = mode;
      const error = await refusal(ownership, { address: w.deployed, message: MESSAGE, signature: ownerSig });
      expect(error.status).toBe(502);
      expect(error.code).toBe('upstream_unavailable');
    }
    const closed = await startRpcProbe(null);
    await closed.close();
    const down = await refusal(walletOwnership(settings(closed.url, 2000)), { address: w.deployed, message: MESSAGE, signature: ownerSig });
    expect(down.code).toBe('upstream_unavailable');
    // EOA proofs never needed the endpoint, so they pass while it is down.
    probe.mode = 'hang';
    await expect(ownership.proveWalletOwnership({ address: w.owner.account.address, message: MESSAGE, signature: ownerSig })).resolves.toEqual({ kind: 'eoa' });
  });

  it('refuses oversized and non-hex signatures before any request', async () => {
    const ownership = walletOwnership({ ...settings(probe.url), smartWalletMaxSignatureBytes: 100 });
    const before = probe.requests;
    for (const signature of [`0x${'00'.repeat(101)}`, 'not hex', `${ownerSig}0`, '0x']) {
      const error = await refusal(ownership, { address: w.deployed, message: MESSAGE, signature });
      expect(error.code).toBe('invalid_signature');
      expect(error.message).toContain('malformed');
    }
    expect(probe.requests).toBe(before);
    expect(SIGNATURE_MAX_LENGTH).toBe(2 + 2 * DEFAULT_MAX_SIGNATURE_BYTES);
  });
});

describe('the chain-id rule for contract signatures', () => {
  it('needs the endpoint\'s chain id, asked once and kept; EOA signatures ignore it', async () => {
    const ownership = walletOwnership(settings(probe.url));
    await expect(ownership.proveWalletOwnership({ address: w.deployed, message: MESSAGE, signature: ownerSig, chainId: 31337 })).resolves.toEqual({
      kind: 'erc1271',
    });
    const before = probe.requests;
    const error = await refusal(ownership, { address: w.deployed, message: MESSAGE, signature: ownerSig, chainId: 1 });
    expect(error.code).toBe('invalid_signature');
    expect(error.message).toContain('Chain ID 1');
    expect(error.message).toContain('chain 31337');
    // Refused from the kept chain id: nothing asked.
    expect(probe.requests).toBe(before);
    await expect(
      ownership.proveWalletOwnership({ address: w.owner.account.address, message: MESSAGE, signature: ownerSig, chainId: 1 }),
    ).resolves.toEqual({ kind: 'eoa' });
  });

  it('a failed chain-id lookup is 502 and is not kept', async () => {
    const ownership = walletOwnership(settings(probe.url, 300));
    probe.mode = 'hang';
    const error = await refusal(ownership, { address: pending.address, message: MESSAGE, signature: pending.wrap(ownerSig), chainId: 31337 });
    expect(error.code).toBe('upstream_unavailable');
    expect(error.status).toBe(502);
    probe.mode = 'forward';
    const patient = walletOwnership(settings(probe.url));
    await expect(patient.rpcChainId()).resolves.toBe(31337);
    // The first instance asks again rather than remembering the failure.
    await expect(ownership.rpcChainId()).resolves.toBe(31337);
  });
});

describe('settings', () => {
  it('SMART_WALLET_RPC_URL defaults to ETH_RPC_URL, can be off, and the cap stays within the schemas\' limit', () => {
    expect(loadConfig({ ETH_RPC_URL: 'https://eth.example/key' }).smartWalletRpcUrl).toBe('https://eth.example/key');
    expect(loadConfig({ ETH_RPC_URL: 'https://eth.example/key', SMART_WALLET_RPC_URL: 'http://127.0.0.1:8545' }).smartWalletRpcUrl).toBe(
      'http://127.0.0.1:8545',
    );
    expect(loadConfig({ ETH_RPC_URL: 'https://eth.example/key', SMART_WALLET_RPC_URL: 'off' }).smartWalletRpcUrl).toBeNull();
    expect(loadConfig({}).smartWalletRpcUrl).toBeNull();
    expect(loadConfig({})).toMatchObject({ smartWalletRpcTimeoutMs: 5000, smartWalletMaxSignatureBytes: DEFAULT_MAX_SIGNATURE_BYTES });
    expect(() => loadConfig({ SMART_WALLET_MAX_SIGNATURE_BYTES: String(DEFAULT_MAX_SIGNATURE_BYTES + 1) })).toThrow(ConfigError);
    expect(() => loadConfig({ SMART_WALLET_MAX_SIGNATURE_BYTES: '64' })).toThrow(ConfigError);
    expect(() => loadConfig({ SMART_WALLET_RPC_URL: 'ftp://x' })).toThrow(ConfigError);
  });

  it('takes an address in any case', async () => {
    const ownership = walletOwnership(settings(probe.url));
    await expect(ownership.proveWalletOwnership({ address: getAddress(w.deployed), message: MESSAGE, signature: ownerSig })).resolves.toEqual({
      kind: 'erc1271',
    });
  });
});
