import { readFileSync } from 'node:fs';
import * as didkit from '@spruceid/didkit-wasm-node';
import type { Hex } from 'viem';
import { describe, expect, it } from 'vitest';
import { CredentialVerifier, type ProofResult, verifyCredentialProof } from '../../../src/scoring/stamps/credentials.js';
import { issueCredential } from '../../../src/scoring/stamps/dev-issuer.js';
import { STAMP_EIP712_TYPES } from '../../../src/scoring/stamps/stamp.schema.js';
import { hostileCredentialOfSize } from '../../helpers/hostile-credentials.js';

/** The one EIP-712 schema intake accepts, and the limits applied before hashing. */
type Json = Record<string, any>;

const SUBJECT = '0xaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
const otherKey: Hex = '0x8da4ef21b864d2cc526dbdb2a120bd2874c36c9d0a1fb7f8c63d7f7a8b41de8f';
const referenceText = readFileSync(new URL('../../fixtures/reference-credentials-expired.json', import.meta.url), 'utf8');
const referenceCredentials = (): Json[] => JSON.parse(referenceText) as Json[];
const reference = (): Json => referenceCredentials()[0]!;

function reasonOf(result: ProofResult): string {
  expect(result.ok).toBe(false);
  return result.ok ? '' : result.reason;
}

describe('the accepted EIP-712 schema', () => {
  it('is exactly what the reference issuer and the development issuer put in a stamp', () => {
    for (const credential of referenceCredentials()) {
      expect(credential.proof.eip712Domain).toEqual({ domain: { name: 'VerifiableCredential' }, primaryType: 'Document', types: STAMP_EIP712_TYPES });
    }
    const issued = issueCredential({ privateKey: otherKey, address: SUBJECT, provider: 'Google', expiresAt: new Date(Date.now() + 86_400_000) });
    expect(issued.proof.eip712Domain.types).toEqual(STAMP_EIP712_TYPES);
    expect(JSON.stringify(issued.proof.eip712Domain)).toBe(JSON.stringify(reference().proof.eip712Domain));
    expect(verifyCredentialProof(issued).ok).toBe(true);
  });

  it('a development-issuer credential verifies with didkit too', async () => {
    const issued = issueCredential({ privateKey: otherKey, address: SUBJECT, provider: 'Github', expiresAt: new Date(Date.now() + 86_400_000) });
    expect(JSON.parse(await didkit.verifyCredential(JSON.stringify(issued), '{}')).errors).toEqual([]);
  });

  it('a hostile schema is refused before any hashing, in far less time than hashing it takes', () => {
    const base = issueCredential({ privateKey: otherKey, address: SUBJECT, provider: 'Google', expiresAt: new Date(Date.now() + 86_400_000) });
    const hostile = hostileCredentialOfSize(base as unknown as Json, 66_000);
    const started = performance.now();
    for (let i = 0; i < 100; i++) {
      expect(reasonOf(verifyCredentialProof(hostile))).toBe('the EIP-712 types in the proof are not the stamp schema');
      expect(reasonOf(new CredentialVerifier({ cacheSize: 0 }).verifyProof(hostile))).toBe('the EIP-712 types in the proof are not the stamp schema');
    }
    // 200 refusals; hashing one such credential took about 300 ms before the schema check.
    expect(performance.now() - started).toBeLessThan(1000);
  });

  const withChange = (change: (credential: Json) => void): Json => {
    const credential = reference();
    change(credential);
    return credential;
  };

  it.each([
    ['an extra member property', withChange((c) => (c.proof.eip712Domain.types.Proof[0].note = 'x')), /not the stamp schema/],
    ['a missing struct type', withChange((c) => delete c.proof.eip712Domain.types.NullifiersContext), /not the stamp schema/],
    ['a struct type under another name', withChange((c) => (c.proof.eip712Domain.types.Proof2 = c.proof.eip712Domain.types.Proof) && delete c.proof.eip712Domain.types.Proof), /not the stamp schema/],
    ['nesting over the limit', withChange((c) => (c.credentialSubject.provider = [[[[[[['Google']]]]]]])), /nested deeper than 8 levels/],
    ['a string over the limit', withChange((c) => (c.credentialSubject.nullifiers = ['n'.repeat(1025)])), /string longer than 1024/],
    ['a property name over the limit', withChange((c) => (c.credentialSubject['k'.repeat(1025)] = 1)), /string longer than 1024/],
    ['100,000 nullifiers (over 4 s of hashing before the limit)', withChange((c) => (c.credentialSubject.nullifiers = Array.from({ length: 100_000 }, (_, i) => `n${i}`))), /more than 400 values/],
  ])('%s is refused before hashing', (_label, credential, reason) => {
    expect(reasonOf(verifyCredentialProof(credential))).toMatch(reason);
    expect(reasonOf(new CredentialVerifier().verifyProof(credential))).toMatch(reason);
  });

  it('limits are applied by the verifier as configured', () => {
    const credential = reference();
    expect(new CredentialVerifier({ limits: { maxDepth: 5, maxStringLength: 1024, maxValues: 400 } }).verifyProof(credential)).toEqual({
      ok: false,
      reason: 'nested deeper than 5 levels',
    });
    expect(new CredentialVerifier({ limits: { maxDepth: 6, maxStringLength: 131, maxValues: 400 } }).verifyProof(credential)).toEqual({
      ok: false,
      reason: 'has a string longer than 131 characters',
    });
    expect(new CredentialVerifier({ limits: { maxDepth: 6, maxStringLength: 132, maxValues: 400 } }).verifyProof(credential).ok).toBe(true);
    expect(new CredentialVerifier({ limits: { maxDepth: 6, maxStringLength: 132, maxValues: 99 } }).verifyProof(credential)).toEqual({
      ok: false,
      reason: 'has more than 99 values',
    });
    expect(new CredentialVerifier({ limits: { maxDepth: 6, maxStringLength: 132, maxValues: 100 } }).verifyProof(credential).ok).toBe(true);
  });
});
