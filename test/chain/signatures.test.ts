import { createRequire } from 'node:module';
import { describe, it, expect } from 'vitest';
import { bytesToHex, keccak256, recoverAddress, toBytes, toHex, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import {
  addressFromPrivateKey,
  recoverAddressFromHash,
  recoverPersonalSignAddress,
  SignatureError,
  signHash,
} from '../../src/chain/signatures.js';

const CURVE_ORDER = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const privateKey: Hex = '0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318';
const account = privateKeyToAccount(privateKey);
const hash = keccak256(toBytes('stampgate'));

function withRecoveryByte(signature: Hex, v: number): Hex {
  return `${signature.slice(0, 130)}${v.toString(16).padStart(2, '0')}` as Hex;
}

function expectSignatureError(action: () => unknown, code: SignatureError['code']): void {
  let thrown: unknown;
  try {
    action();
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(SignatureError);
  expect((thrown as SignatureError).code).toBe(code);
}

describe('native backend', () => {
  it('loads libsecp256k1 bindings, not the pure-JavaScript fallback', () => {
    const require = createRequire(import.meta.url);
    expect(require('secp256k1')).toBe(require('secp256k1/bindings.js'));
  });
});

describe('signHash and recoverAddressFromHash', () => {
  it('derives the same address as viem', () => {
    expect(addressFromPrivateKey(privateKey)).toBe(account.address.toLowerCase());
  });

  it('signs exactly as viem does (RFC 6979, v 27/28) and recovers the lower-case signer', async () => {
    const signature = signHash(privateKey, hash);
    expect(signature).toBe(await account.sign({ hash }));
    expect(recoverAddressFromHash(hash, signature)).toBe(account.address.toLowerCase());
    expect(recoverAddressFromHash(toBytes(hash), toBytes(signature))).toBe(account.address.toLowerCase());
  });

  it('agrees with viem recovery on many hashes and accepts v as 0/1 or 27/28', async () => {
    for (let index = 0; index < 25; index++) {
      const message = keccak256(toHex(`message ${index}`));
      const signature = signHash(privateKey, message);
      const v = Number.parseInt(signature.slice(130), 16);
      expect([27, 28]).toContain(v);
      const viemSigner = (await recoverAddress({ hash: message, signature })).toLowerCase();
      expect(recoverAddressFromHash(message, signature)).toBe(viemSigner);
      expect(recoverAddressFromHash(message, withRecoveryByte(signature, v - 27))).toBe(viemSigner);
    }
  });

  it('recovers a different address for a different hash', () => {
    const signature = signHash(privateKey, hash);
    expect(recoverAddressFromHash(keccak256(toBytes('other')), signature)).not.toBe(account.address.toLowerCase());
  });

  it('refuses the high-s twin of a valid signature, which viem would accept', async () => {
    const signature = signHash(privateKey, hash);
    const s = BigInt(`0x${signature.slice(66, 130)}`);
    const v = Number.parseInt(signature.slice(130), 16);
    const twin = `${signature.slice(0, 66)}${(CURVE_ORDER - s).toString(16).padStart(64, '0')}${(v === 27 ? 28 : 27).toString(16)}` as Hex;
    expect((await recoverAddress({ hash, signature: twin })).toLowerCase()).toBe(account.address.toLowerCase());
    expectSignatureError(() => recoverAddressFromHash(hash, twin), 'non_canonical_signature');
  });

  it('throws only SignatureError for malformed input', () => {
    const signature = signHash(privateKey, hash);
    expectSignatureError(() => recoverAddressFromHash(hash, signature.slice(0, 128) as Hex), 'malformed_signature');
    expectSignatureError(() => recoverAddressFromHash(hash, `${signature}00` as Hex), 'malformed_signature');
    expectSignatureError(() => recoverAddressFromHash(hash, `0x${'zz'.repeat(65)}`), 'malformed_signature');
    expectSignatureError(() => recoverAddressFromHash(hash, signature.slice(2) as Hex), 'malformed_signature');
    expectSignatureError(() => recoverAddressFromHash(hash, null as unknown as Hex), 'malformed_signature');
    expectSignatureError(() => recoverAddressFromHash(hash, withRecoveryByte(signature, 29)), 'invalid_recovery_id');
    expectSignatureError(() => recoverAddressFromHash(hash, withRecoveryByte(signature, 2)), 'invalid_recovery_id');
    expectSignatureError(() => recoverAddressFromHash(hash, `0x${'00'.repeat(64)}1b`), 'unrecoverable_signature');
    expectSignatureError(
      () => recoverAddressFromHash(hash, `0x${'ff'.repeat(32)}${'00'.repeat(31)}011b`),
      'unrecoverable_signature',
    );
    expectSignatureError(() => recoverAddressFromHash('0x1234', signature), 'malformed_hash');
    expectSignatureError(() => recoverAddressFromHash(new Uint8Array(31), signature), 'malformed_hash');
  });
});

describe('recoverPersonalSignAddress', () => {
  it('recovers the signer of an EIP-191 personal_sign message', async () => {
    const message = 'I hereby agree to submit my address in order to score my associated Gitcoin Passport.\n\nNonce: 5f0d…';
    const signature = await account.signMessage({ message });
    expect(recoverPersonalSignAddress(message, signature)).toBe(account.address.toLowerCase());
    expect(recoverPersonalSignAddress(`${message} `, signature)).not.toBe(account.address.toLowerCase());
  });

  it('does not treat a 0x-looking message as raw bytes', async () => {
    const message = bytesToHex(toBytes('hello'));
    const signature = await account.signMessage({ message });
    expect(recoverPersonalSignAddress(message, signature)).toBe(account.address.toLowerCase());
  });
});
