/**
 * The hand-written EIP-712 encoders of the two signed types against independent references on
 * random inputs: viem's generic hashTypedData (the same key signs both digests, RFC 6979, so equal
 * signatures mean equal digests), eas-sdk's UID and its signature verification.
 */
import { randomBytes, randomInt } from 'node:crypto';
import { bytesToHex, getAddress, hashTypedData, type Hex } from 'viem';
import { describe, expect, it } from 'vitest';
import { addressFromPrivateKey, signHash } from '../../src/chain/signatures.js';
import { signAttestationRequest, type AttestationRequestMessage } from '../../src/onchain/attestation-request.js';
import { verifierTypes } from '../../src/onchain/interface-files.js';
import { OFFCHAIN_ATTEST_TYPES, offchainAttestationUid, signOffchainAttestation, type OffchainAttestationInput } from '../../src/onchain/offchain-attestation.js';
import type { RsvSignature } from '../../src/onchain/typed-signing.js';
import { easSdk } from '../helpers/eas.js';

const privateKey = `0x${'5a'.repeat(31)}01` as Hex;
const signer = getAddress(addressFromPrivateKey(privateKey));

const hex = (bytes: number) => bytesToHex(randomBytes(bytes));
const address = () => hex(20);
/** An unsigned integer of up to `bits` bits, often at the edges. */
function uint(bits: number): bigint {
  const max = (1n << BigInt(bits)) - 1n;
  const pick = randomInt(4);
  if (pick === 0) return 0n;
  if (pick === 1) return max;
  return BigInt(bytesToHex(randomBytes(bits / 8))) & max;
}

function rsv(signature: Hex): RsvSignature {
  return { r: `0x${signature.slice(2, 66)}`, s: `0x${signature.slice(66, 130)}`, v: Number.parseInt(signature.slice(130, 132), 16) };
}

function randomOffchainInput(): OffchainAttestationInput {
  return {
    chainId: randomInt(1, 2 ** 40),
    eas: address(),
    easVersion: ['1.3.0', '1.0.1', '0.26', 'ß-2'][randomInt(4)] as string,
    schemaUid: hex(32),
    recipient: address(),
    data: hex(randomInt(0, 4000)),
    time: randomInt(0, 2 ** 47),
    expirationTime: uint(64),
    revocable: randomInt(2) === 1,
    salt: randomInt(2) === 1 ? hex(32) : undefined,
  };
}

describe('the offchain Attest signature', () => {
  it('signs the digest viem computes, with the UID eas-sdk computes, and eas-sdk verifies it', () => {
    for (let index = 0; index < 150; index++) {
      const input = randomOffchainInput();
      const signed = signOffchainAttestation(privateKey, input);
      const { message, domain } = signed;
      const digest = hashTypedData({
        domain: { ...domain, chainId: BigInt(domain.chainId) },
        types: OFFCHAIN_ATTEST_TYPES,
        primaryType: 'Attest',
        message: { ...message, time: BigInt(message.time), expirationTime: BigInt(message.expirationTime) },
      });
      expect(signed.signature, JSON.stringify({ ...input, expirationTime: String(input.expirationTime) })).toEqual(rsv(signHash(privateKey, digest)));
      const easUid = easSdk.Offchain.getOffchainUID(2, message.schema, message.recipient, BigInt(message.time), BigInt(message.expirationTime), message.revocable, message.refUID, message.data, message.salt);
      expect(signed.uid).toBe(easUid);
      expect(offchainAttestationUid(message)).toBe(easUid);
      if (index % 10 === 0) {
        const offchain = new easSdk.Offchain({ address: domain.verifyingContract, version: domain.version, chainId: BigInt(domain.chainId) }, easSdk.OffchainAttestationVersion.Version2, undefined as never);
        expect(offchain.verifyOffchainAttestationSignature(signer, signed as never)).toBe(true);
      }
    }
  });

  it('draws a new salt for every attestation', () => {
    const input = { ...randomOffchainInput(), salt: undefined };
    const salts = new Set(Array.from({ length: 300 }, () => signOffchainAttestation(privateKey, input).message.salt));
    expect(salts.size).toBe(300);
    for (const salt of salts) expect(salt).toMatch(/^0x[0-9a-f]{64}$/);
  });

  it('refuses values its fields cannot hold instead of signing something else', () => {
    expect(() => signOffchainAttestation(privateKey, { ...randomOffchainInput(), expirationTime: 2n ** 64n })).toThrow(RangeError);
    expect(() => signOffchainAttestation(privateKey, { ...randomOffchainInput(), schemaUid: hex(31) })).toThrow(RangeError);
    expect(() => signOffchainAttestation(privateKey, { ...randomOffchainInput(), data: '0xabc' as Hex })).toThrow(RangeError);
    expect(() => signOffchainAttestation(privateKey, { ...randomOffchainInput(), recipient: '0x1234' })).toThrow(RangeError);
  });
});

function randomRequest(): AttestationRequestMessage {
  return {
    recipient: getAddress(address()),
    attestations: Array.from({ length: randomInt(0, 4) }, () => ({ schema: hex(32), expirationTime: uint(64), data: hex(randomInt(0, 3000)) })),
    nonce: uint(256),
    deadline: uint(64),
    fee: uint(256),
  };
}

describe('the verifier request signature', () => {
  it('signs the digest viem computes of the verifier\'s shipped EIP-712 types', () => {
    for (let index = 0; index < 150; index++) {
      const message = randomRequest();
      const chainId = randomInt(1, 2 ** 40);
      const verifier = getAddress(address());
      const digest = hashTypedData({ domain: { ...verifierTypes.domain, chainId: BigInt(chainId), verifyingContract: verifier }, types: verifierTypes.types, primaryType: verifierTypes.primaryType, message: { ...message } });
      expect(signAttestationRequest(privateKey, chainId, verifier, message)).toEqual(rsv(signHash(privateKey, digest)));
    }
  });

  it('signs a different digest on another chain or verifier', () => {
    const message = randomRequest();
    const verifier = getAddress(address());
    const base = signAttestationRequest(privateKey, 10, verifier, message);
    expect(signAttestationRequest(privateKey, 11, verifier, message)).not.toEqual(base);
    expect(signAttestationRequest(privateKey, 10, getAddress(address()), message)).not.toEqual(base);
  });

  it('refuses a deadline beyond uint64', () => {
    expect(() => signAttestationRequest(privateKey, 10, getAddress(address()), { ...randomRequest(), deadline: 2n ** 64n })).toThrow(RangeError);
  });
});
