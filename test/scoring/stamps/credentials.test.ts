import { readFileSync } from 'node:fs';
import * as didkit from '@spruceid/didkit-wasm-node';
import secp256k1 from 'secp256k1';
import { describe, it, expect } from 'vitest';
import { toBytes, type Hex } from 'viem';
import { hashTypedData } from '../../../src/chain/eip712.js';
import { signHash } from '../../../src/chain/signatures.js';
import {
  checkCredentialAt,
  credentialDigest,
  CredentialVerifier,
  verifyCredentialProof,
  type ProofResult,
  type VerifiedCredential,
} from '../../../src/scoring/stamps/credentials.js';

type Json = Record<string, any>;

const REFERENCE_ISSUER = 'did:ethr:0x018d103c154748e8d5a1d7658185125175457f84';
const SUBJECT = '0xaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
const BEFORE_EXPIRY = new Date('2026-01-01T00:00:00Z');
const TODAY = new Date('2026-11-21T12:00:00Z');
const SIGNER_MISMATCH = 'proof signature does not match the issuer';

const referenceText = readFileSync(
  new URL('../../fixtures/reference-credentials-expired.json', import.meta.url),
  'utf8',
);
const referenceCredentials = (): Json[] => JSON.parse(referenceText) as Json[];
const reference = (): Json => referenceCredentials()[0]!;

function verified(result: ProofResult): VerifiedCredential {
  if (!result.ok) throw new Error(`expected a verified proof, got: ${result.reason}`);
  return result.credential;
}

function reasonOf(result: ProofResult): string {
  expect(result.ok).toBe(false);
  return result.ok ? '' : result.reason;
}

function base64Url(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('base64url');
}

function jwkOf(privateKey: Hex): string {
  const secret = toBytes(privateKey);
  const publicKey = secp256k1.publicKeyCreate(secret, false);
  return JSON.stringify({
    kty: 'EC',
    crv: 'secp256k1',
    x: base64Url(publicKey.subarray(1, 33)),
    y: base64Url(publicKey.subarray(33, 65)),
    d: base64Url(secret),
  });
}

const otherKey: Hex = '0x8da4ef21b864d2cc526dbdb2a120bd2874c36c9d0a1fb7f8c63d7f7a8b41de8f';

describe('reference credentials', () => {
  it('verify, with the fields scoring needs', () => {
    const providers = referenceCredentials().map((credential) => {
      const result = verified(verifyCredentialProof(credential));
      expect(result.issuer).toBe(REFERENCE_ISSUER);
      expect(result.subjectAddress).toBe(SUBJECT);
      expect(result.nullifiers).toEqual([`v0:${result.provider}:${SUBJECT}:test-nullifier`]);
      expect(result.issuanceDate.toISOString()).toBe('2025-11-20T13:12:09.000Z');
      expect(result.expirationDate.toISOString()).toBe('2026-02-18T13:12:09.000Z');
      expect(result.digest).toBe(credentialDigest(credential));
      return result.provider;
    });
    expect(providers).toEqual(['Google', 'Twitter', 'Github']);
  });

  it('are accepted before expiry and refused for expiry today', () => {
    const trustedIssuers = new Set([REFERENCE_ISSUER]);
    for (const credential of referenceCredentials()) {
      const proof = verified(verifyCredentialProof(credential));
      expect(checkCredentialAt(proof, { now: BEFORE_EXPIRY, trustedIssuers, address: SUBJECT })).toEqual({ ok: true });
      const today = checkCredentialAt(proof, { now: TODAY, trustedIssuers, address: SUBJECT });
      expect(today).toEqual({ ok: false, reason: 'credential expired at 2026-02-18T13:12:09.000Z' });
    }
  });

  it('are refused for an untrusted issuer or another subject, and matched case-insensitively', () => {
    const proof = verified(verifyCredentialProof(reference()));
    const context = { now: BEFORE_EXPIRY, trustedIssuers: new Set([REFERENCE_ISSUER]), address: SUBJECT };
    expect(checkCredentialAt(proof, { ...context, trustedIssuers: new Set(['did:ethr:0x' + '1'.repeat(40)]) })).toEqual({
      ok: false,
      reason: 'issuer is not trusted',
    });
    expect(checkCredentialAt(proof, { ...context, address: '0x' + 'b'.repeat(40) })).toEqual({
      ok: false,
      reason: 'credential subject is a different address',
    });
    expect(checkCredentialAt(proof, { ...context, address: SUBJECT.toUpperCase().replace('0X', '0x') })).toEqual({ ok: true });
    expect(
      checkCredentialAt(proof, { ...context, trustedIssuers: new Set(['did:ethr:0x018D103C154748E8D5A1D7658185125175457F84']) }),
    ).toEqual({ ok: true });
    expect(checkCredentialAt(proof, { ...context, now: new Date('2026-02-18T13:12:09Z') }).ok).toBe(false);
    expect(checkCredentialAt(proof, { ...context, now: new Date('2026-02-18T13:12:08.999Z') }).ok).toBe(true);
  });
});

describe('tampering', () => {
  const signedFieldChanges: Array<[string, (credential: Json) => void]> = [
    ['provider', (c) => (c.credentialSubject.provider = 'Twitter')],
    ['a nullifier', (c) => (c.credentialSubject.nullifiers[0] += 'x')],
    ['an added nullifier', (c) => c.credentialSubject.nullifiers.push('v0:Google:other')],
    ['subject id', (c) => (c.credentialSubject.id = `did:pkh:eip155:1:0x${'b'.repeat(40)}`)],
    ['subject id letter case', (c) => (c.credentialSubject.id = `did:pkh:eip155:1:0x${'A'.repeat(40)}`)],
    ['issuanceDate', (c) => (c.issuanceDate = '2025-11-20T13:12:10Z')],
    ['expirationDate', (c) => (c.expirationDate = '2027-02-18T13:12:09Z')],
    ['proof.created', (c) => (c.proof.created = '2025-11-20T13:12:09.615116195Z')],
    ['an @context entry', (c) => (c['@context'][1] = 'https://w3id.org/vc/status-list/2021/v2')],
    ['the subject @context', (c) => (c.credentialSubject['@context'].provider = 'https://schema.org/Name')],
    ['the proof @context', (c) => (c.proof['@context'] = 'https://w3id.org/security/v2')],
    ['type', (c) => c.type.push('StampCredential')],
    ['the EIP-712 domain', (c) => (c.proof.eip712Domain.domain.name = 'Other')],
    ['one signature byte', (c) => (c.proof.proofValue = c.proof.proofValue.replace(/^0x9a/, '0x9b'))],
  ];

  it.each(signedFieldChanges)('changing %s breaks the proof', (_field, change) => {
    const credential = reference();
    change(credential);
    const reason = reasonOf(verifyCredentialProof(credential));
    expect(reason === SIGNER_MISMATCH || reason.startsWith('proof signature is invalid')).toBe(true);
  });

  it('an issuer that is not the signer is refused, with its verification method or without', () => {
    const otherIssuer = `did:ethr:0x${'1'.repeat(40)}`;
    const renamed = reference();
    renamed.issuer = otherIssuer;
    expect(reasonOf(verifyCredentialProof(renamed))).toBe("proof verification method is not the issuer's controller key");
    renamed.proof.verificationMethod = `${otherIssuer}#controller`;
    expect(reasonOf(verifyCredentialProof(renamed))).toBe(SIGNER_MISMATCH);
  });

  it('a verification method other than the issuer controller is refused', () => {
    for (const method of [`${REFERENCE_ISSUER}#Eip712Method2021`, REFERENCE_ISSUER, `did:ethr:0x${'1'.repeat(40)}#controller`]) {
      const credential = reference();
      credential.proof.verificationMethod = method;
      expect(reasonOf(verifyCredentialProof(credential))).toBe("proof verification method is not the issuer's controller key");
    }
  });

  it('unsigned additions are refused rather than ignored', () => {
    const atTop = reference();
    atTop.credentialStatus = { id: 'https://example.org/status/1' };
    expect(reasonOf(verifyCredentialProof(atTop))).toMatch(/no member in struct type "Document"/);
    const inSubject = reference();
    inSubject.credentialSubject.hash = 'v0.0.0:forged';
    expect(reasonOf(verifyCredentialProof(inSubject))).toMatch(/credentialSubject\.hash/);
  });

  it('a signature re-encoded with v as 0/1 still verifies; its high-s twin does not', () => {
    const credential = reference();
    const signature: string = credential.proof.proofValue;
    const v = Number.parseInt(signature.slice(130), 16);
    credential.proof.proofValue = `${signature.slice(0, 130)}0${v - 27}`;
    expect(verifyCredentialProof(credential).ok).toBe(true);

    const n = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
    const s = BigInt(`0x${signature.slice(66, 130)}`);
    credential.proof.proofValue = `${signature.slice(0, 66)}${(n - s).toString(16).padStart(64, '0')}${v === 27 ? '1c' : '1b'}`;
    expect(reasonOf(verifyCredentialProof(credential))).toMatch(/^proof signature is invalid: .*upper half/);
  });
});

describe('malformed input', () => {
  const cyclic: Json = reference();
  cyclic.credentialSubject.self = cyclic;

  const cases: Array<[string, unknown, RegExp]> = [
    ['null', null, /not a JSON object/],
    ['a string', JSON.stringify(reference()), /not a JSON object/],
    ['a number', 42, /not a JSON object/],
    ['an array', [reference()], /not a JSON object/],
    ['an empty object', {}, /issuer/],
    ['a cyclic object', cyclic, /nested deeper than 8 levels/],
    ['a BigInt inside', { ...reference(), extra: 1n }, /could not be read/],
  ];

  const withChange = (change: (credential: Json) => void): Json => {
    const credential = reference();
    change(credential);
    return credential;
  };

  const changes: Array<[string, Json, RegExp]> = [
    ['missing proof', withChange((c) => delete c.proof), /has no proof/],
    ['proof as a string', withChange((c) => (c.proof = 'x')), /has no proof/],
    ['non-hex signature', withChange((c) => (c.proof.proofValue = `0x${'zz'.repeat(65)}`)), /65-byte hex signature/],
    ['truncated signature', withChange((c) => (c.proof.proofValue = c.proof.proofValue.slice(0, 100))), /65-byte hex/],
    ['missing signature', withChange((c) => delete c.proof.proofValue), /65-byte hex signature/],
    ['bad recovery byte', withChange((c) => (c.proof.proofValue = `${c.proof.proofValue.slice(0, 130)}1d`)), /recovery byte 29/],
    ['zero signature', withChange((c) => (c.proof.proofValue = `0x${'00'.repeat(64)}1b`)), /no public key can be recovered/],
    ['wrong proof type', withChange((c) => (c.proof.type = 'Ed25519Signature2018')), /proof type/],
    ['wrong proof purpose', withChange((c) => (c.proof.proofPurpose = 'authentication')), /proof purpose/],
    ['missing eip712Domain', withChange((c) => delete c.proof.eip712Domain), /EIP-712 types/],
    ['eip712Domain without types', withChange((c) => delete c.proof.eip712Domain.types), /EIP-712 types/],
    ['types that are not lists', withChange((c) => (c.proof.eip712Domain.types.Proof = 'x')), /not the stamp schema/],
    ['unknown primary type', withChange((c) => (c.proof.eip712Domain.primaryType = 'Nope')), /primary type is not "Document"/],
    [
      'the EIP-712 member order changed',
      withChange((c) => c.proof.eip712Domain.types.Document.push(c.proof.eip712Domain.types.Document.shift())),
      /not the stamp schema/,
    ],
    ['an extra struct type', withChange((c) => (c.proof.eip712Domain.types.Extra = [{ name: 'a', type: 'string' }])), /not the stamp schema/],
    ['issuer not did:ethr', withChange((c) => (c.issuer = 'did:web:example.org')), /did:ethr/],
    ['issuer with a network', withChange((c) => (c.issuer = `did:ethr:mainnet:${c.issuer.slice(9)}`)), /did:ethr/],
    ['subject on another chain', withChange((c) => (c.credentialSubject.id = `did:pkh:eip155:10:${SUBJECT}`)), /subject id/],
    ['no subject', withChange((c) => delete c.credentialSubject), /credentialSubject/],
    ['empty provider', withChange((c) => (c.credentialSubject.provider = '')), /provider/],
    ['empty nullifier list', withChange((c) => (c.credentialSubject.nullifiers = [])), /nullifiers nor a hash/],
    ['non-string nullifier', withChange((c) => (c.credentialSubject.nullifiers = [7])), /nullifiers nor a hash/],
    ['no nullifiers or hash', withChange((c) => delete c.credentialSubject.nullifiers), /nullifiers nor a hash/],
    ['unparsable issuanceDate', withChange((c) => (c.issuanceDate = 'yesterday')), /issuanceDate/],
    ['impossible expirationDate', withChange((c) => (c.expirationDate = '2026-02-30T25:00:00Z')), /expirationDate/],
    ['missing type', withChange((c) => delete c.type), /VerifiableCredential/],
  ];

  it.each([...cases, ...changes])('%s is refused with a reason, without throwing', (_label, input, reason) => {
    let result: ProofResult | undefined;
    expect(() => (result = verifyCredentialProof(input))).not.toThrow();
    expect(reasonOf(result!)).toMatch(reason);
    expect(() => new CredentialVerifier().verifyProof(input)).not.toThrow();
    expect(new CredentialVerifier().verifyProof(input).ok).toBe(false);
  });
});

describe('credentials carrying a hash instead of nullifiers', () => {
  it('verify, with the hash as the only nullifier', () => {
    const credential = reference();
    const types = credential.proof.eip712Domain.types;
    types['@context'] = [
      { name: 'hash', type: 'string' },
      { name: 'provider', type: 'string' },
    ];
    types.CredentialSubject = [
      { name: '@context', type: '@context' },
      { name: 'hash', type: 'string' },
      { name: 'id', type: 'string' },
      { name: 'provider', type: 'string' },
    ];
    delete types.NullifiersContext;
    credential.credentialSubject = {
      '@context': { hash: 'https://schema.org/Text', provider: 'https://schema.org/Text' },
      hash: 'v0.0.0:8JZcQJy6uwNGPDZnvfGbEs6mf5OZVD1mUOdhKNrOHls=',
      id: `did:pkh:eip155:1:${SUBJECT}`,
      provider: 'Google',
    };
    const signerKey = otherKey;
    credential.issuer = didkit.keyToDID('ethr', jwkOf(signerKey));
    credential.proof.verificationMethod = `${credential.issuer}#controller`;
    const { proofValue: _unused, eip712Domain, ...signedProof } = credential.proof;
    const digest = hashTypedData({
      types: eip712Domain.types,
      primaryType: eip712Domain.primaryType,
      domain: eip712Domain.domain,
      message: { ...credential, proof: signedProof },
    });
    credential.proof.proofValue = signHash(signerKey, digest);
    const result = verified(verifyCredentialProof(credential));
    expect(result.nullifiers).toEqual(['v0.0.0:8JZcQJy6uwNGPDZnvfGbEs6mf5OZVD1mUOdhKNrOHls=']);
    expect(result.issuer).toBe(credential.issuer);
  });
});

describe('credentialDigest', () => {
  it('is the same for a reformatted copy with other key order and whitespace', () => {
    const original = reference();
    const reorder = (value: unknown): unknown =>
      Array.isArray(value)
        ? value.map(reorder)
        : typeof value === 'object' && value !== null
          ? Object.fromEntries(Object.entries(value).reverse().map(([key, inner]) => [key, reorder(inner)]))
          : value;
    const reformatted = JSON.parse(JSON.stringify(reorder(original), null, 4)) as unknown;
    expect(JSON.stringify(reformatted)).not.toBe(JSON.stringify(original));
    expect(credentialDigest(reformatted)).toBe(credentialDigest(original));
    expect(credentialDigest(original)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('differs when any content differs, including array order', () => {
    const original = reference();
    const changed = reference();
    changed.proof.created = '2025-11-20T13:12:09.615116195Z';
    expect(credentialDigest(changed)).not.toBe(credentialDigest(original));
    const reordered = reference();
    reordered['@context'].reverse();
    expect(credentialDigest(reordered)).not.toBe(credentialDigest(original));
    expect(new Set(referenceCredentials().map(credentialDigest)).size).toBe(3);
  });
});

describe('CredentialVerifier cache', () => {
  it('recovers the signature of a credential once, including for a reformatted copy', () => {
    const verifier = new CredentialVerifier();
    const first = verifier.verifyProof(reference());
    expect(verifier.stats()).toMatchObject({ hits: 0, misses: 1, size: 1, capacity: 50_000 });
    const second = verifier.verifyProof(JSON.parse(JSON.stringify(reference(), null, 2)));
    expect(verifier.stats()).toMatchObject({ hits: 1, misses: 1, size: 1 });
    expect(second).toBe(first);
    expect(verified(second).provider).toBe('Google');
  });

  it('caches failures too, since a proof fails the same way every time', () => {
    const verifier = new CredentialVerifier();
    const forged = reference();
    forged.credentialSubject.provider = 'Twitter';
    expect(reasonOf(verifier.verifyProof(forged))).toBe(SIGNER_MISMATCH);
    expect(reasonOf(verifier.verifyProof(forged))).toBe(SIGNER_MISMATCH);
    expect(verifier.stats()).toMatchObject({ hits: 1, misses: 1 });
  });

  it('evicts the least recently used result when full', () => {
    const verifier = new CredentialVerifier({ cacheSize: 2 });
    const [google, twitter, github] = referenceCredentials() as [Json, Json, Json];
    verifier.verifyProof(google);
    verifier.verifyProof(twitter);
    verifier.verifyProof(google);
    verifier.verifyProof(github);
    expect(verifier.stats()).toMatchObject({ hits: 1, misses: 3, size: 2 });
    verifier.verifyProof(google);
    expect(verifier.stats()).toMatchObject({ hits: 2, misses: 3 });
    verifier.verifyProof(twitter);
    expect(verifier.stats()).toMatchObject({ hits: 2, misses: 4, size: 2 });
  });

  it('does not cache with a size of zero and rejects nonsense sizes', () => {
    const verifier = new CredentialVerifier({ cacheSize: 0 });
    verifier.verifyProof(reference());
    verifier.verifyProof(reference());
    expect(verifier.stats()).toMatchObject({ hits: 0, misses: 2, size: 0 });
    expect(() => new CredentialVerifier({ cacheSize: -1 })).toThrow(RangeError);
    expect(() => new CredentialVerifier({ cacheSize: 1.5 })).toThrow(RangeError);
  });

  it('applies the time-dependent checks to a cached result', () => {
    const verifier = new CredentialVerifier();
    const proof = verified(verifier.verifyProof(reference()));
    const trustedIssuers = new Set([REFERENCE_ISSUER]);
    expect(verifier.checkCredentialAt(proof, { now: BEFORE_EXPIRY, trustedIssuers, address: SUBJECT }).ok).toBe(true);
    expect(verifier.checkCredentialAt(proof, { now: TODAY, trustedIssuers, address: SUBJECT }).ok).toBe(false);
  });
});

describe('didkit as the independent implementation', () => {
  it('a credential didkit issues verifies with our verifier', async () => {
    const jwk = jwkOf(otherKey);
    const issuer = didkit.keyToDID('ethr', jwk);
    const { proof, ...unsigned } = reference();
    unsigned.issuer = issuer;
    unsigned.credentialSubject.provider = 'Discord';
    unsigned.credentialSubject.nullifiers = ['v0:Discord:someone', 'v1:Discord:someone-else'];
    const options = {
      type: 'EthereumEip712Signature2021',
      verificationMethod: await didkit.keyToVerificationMethod('ethr', jwk),
      proofPurpose: 'assertionMethod',
      eip712Domain: proof.eip712Domain,
    };
    const issued = JSON.parse(await didkit.issueCredential(JSON.stringify(unsigned), JSON.stringify(options), jwk)) as Json;
    expect(JSON.parse(await didkit.verifyCredential(JSON.stringify(issued), '{}')).errors).toEqual([]);

    const result = verified(verifyCredentialProof(issued));
    expect(result.issuer).toBe(issuer);
    expect(result.provider).toBe('Discord');
    expect(result.nullifiers).toEqual(['v0:Discord:someone', 'v1:Discord:someone-else']);

    issued.credentialSubject.nullifiers.pop();
    expect(reasonOf(verifyCredentialProof(issued))).toBe(SIGNER_MISMATCH);
  });

  it('agrees with didkit that every reference credential verifies and a tampered one does not', async () => {
    for (const credential of referenceCredentials()) {
      expect(JSON.parse(await didkit.verifyCredential(JSON.stringify(credential), '{}')).errors).toEqual([]);
      expect(verifyCredentialProof(credential).ok).toBe(true);
    }
    const tampered = reference();
    tampered.credentialSubject.provider = 'Twitter';
    expect(JSON.parse(await didkit.verifyCredential(JSON.stringify(tampered), '{}')).errors).not.toEqual([]);
    expect(verifyCredentialProof(tampered).ok).toBe(false);
  });

  it('a didkit credential without eip712Domain (types left implicit) is refused, as the stamp format requires them', async () => {
    const jwk = jwkOf(otherKey);
    const { proof: _proof, ...unsigned } = reference();
    unsigned.issuer = didkit.keyToDID('ethr', jwk);
    const options = {
      type: 'EthereumEip712Signature2021',
      verificationMethod: `${unsigned.issuer}#controller`,
      proofPurpose: 'assertionMethod',
    };
    const issued = JSON.parse(await didkit.issueCredential(JSON.stringify(unsigned), JSON.stringify(options), jwk)) as Json;
    expect(issued.proof.eip712Domain).toBeUndefined();
    expect(reasonOf(verifyCredentialProof(issued))).toBe('proof does not carry EIP-712 types, primary type and domain');
  });
});
