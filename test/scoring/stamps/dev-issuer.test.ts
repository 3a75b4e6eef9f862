import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as didkit from '@spruceid/didkit-wasm-node';
import secp256k1 from 'secp256k1';
import { describe, it, expect, afterAll } from 'vitest';
import { toBytes, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { checkCredentialAt, verifyCredentialProof, type VerifiedCredential } from '../../../src/scoring/stamps/credentials.js';
import {
  DEV_ISSUER_KEY_FILE,
  issueCredential,
  issuerDidFromPrivateKey,
  loadOrCreateIssuerKey,
} from '../../../src/scoring/stamps/dev-issuer.js';

type Json = Record<string, any>;

const privateKey: Hex = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d';
const holder = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
const issuedAt = new Date('2026-11-21T09:30:15.250Z');
const expiresAt = new Date('2027-02-19T09:30:15Z');

const reference = (
  JSON.parse(readFileSync(new URL('../../fixtures/reference-credentials-expired.json', import.meta.url), 'utf8')) as Json[]
)[0]!;

const directories: string[] = [];
async function newDirectory(): Promise<string> {
  const directory = await mkdtemp(join(tmpdir(), 'stampgate-dev-issuer-'));
  directories.push(directory);
  return directory;
}
afterAll(async () => {
  await Promise.all(directories.map((directory) => rm(directory, { recursive: true, force: true })));
});

function jwkOf(key: Hex): string {
  const secret = toBytes(key);
  const publicKey = secp256k1.publicKeyCreate(secret, false);
  const base64Url = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url');
  return JSON.stringify({
    kty: 'EC',
    crv: 'secp256k1',
    x: base64Url(publicKey.subarray(1, 33)),
    y: base64Url(publicKey.subarray(33, 65)),
    d: base64Url(secret),
  });
}

async function didkitErrors(credential: unknown): Promise<string[]> {
  return (JSON.parse(await didkit.verifyCredential(JSON.stringify(credential), '{}')) as { errors: string[] }).errors;
}

function verifiedBy(credential: unknown): VerifiedCredential {
  const result = verifyCredentialProof(credential);
  if (!result.ok) throw new Error(`expected a verified proof, got: ${result.reason}`);
  return result.credential;
}

function shapeOf(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(shapeOf);
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, shapeOf(inner)]));
  }
  return typeof value;
}

describe('issuerDidFromPrivateKey', () => {
  it('is the lower-case did:ethr of the key address, as didkit derives it', () => {
    const did = issuerDidFromPrivateKey(privateKey);
    expect(did).toBe(`did:ethr:${privateKeyToAccount(privateKey).address.toLowerCase()}`);
    expect(did).toBe(didkit.keyToDID('ethr', jwkOf(privateKey)));
  });
});

describe('issueCredential', () => {
  const credential = issueCredential({ privateKey, address: holder, provider: 'Google', issuedAt, expiresAt });

  it('has the shape of the reference credentials, key order included', () => {
    expect(shapeOf(credential)).toEqual(shapeOf(reference));
    expect(JSON.stringify(Object.keys(credential))).toBe(JSON.stringify(Object.keys(reference)));
    expect(Object.keys(credential.proof)).toEqual(Object.keys(reference.proof));
    expect(credential['@context']).toEqual(reference['@context']);
    expect(credential.type).toEqual(reference.type);
    expect(credential.credentialSubject['@context']).toEqual(reference.credentialSubject['@context']);
    expect(credential.proof.eip712Domain).toEqual(reference.proof.eip712Domain);
    for (const field of ['@context', 'proofPurpose', 'type'] as const) {
      expect(credential.proof[field]).toBe(reference.proof[field]);
    }
  });

  it('states its subject, issuer and dates the way the reference issuer does', () => {
    const issuer = issuerDidFromPrivateKey(privateKey);
    expect(credential.issuer).toBe(issuer);
    expect(credential.proof.verificationMethod).toBe(`${issuer}#controller`);
    expect(credential.credentialSubject.id).toBe(`did:pkh:eip155:1:${holder.toLowerCase()}`);
    expect(credential.issuanceDate).toBe('2026-11-21T09:30:15Z');
    expect(credential.expirationDate).toBe('2027-02-19T09:30:15Z');
    expect(credential.proof.created).toBe('2026-11-21T09:30:15.250Z');
  });

  it('verifies with our verifier and passes the scoring checks for its holder', () => {
    const verified = verifiedBy(credential);
    expect(verified.issuer).toBe(issuerDidFromPrivateKey(privateKey));
    expect(verified.subjectAddress).toBe(holder.toLowerCase());
    expect(verified.provider).toBe('Google');
    const context = { trustedIssuers: new Set([verified.issuer]), address: holder };
    expect(checkCredentialAt(verified, { ...context, now: new Date('2027-01-01T00:00:00Z') })).toEqual({ ok: true });
    expect(checkCredentialAt(verified, { ...context, now: new Date('2027-02-19T09:30:15Z') }).ok).toBe(false);
  });

  it('verifies with didkit, and didkit notices tampering with it', async () => {
    expect(await didkitErrors(credential)).toEqual([]);
    const tampered = structuredClone(credential);
    tampered.credentialSubject.nullifiers = ['v0:Google:someone-else'];
    expect(await didkitErrors(tampered)).not.toEqual([]);
    expect(verifyCredentialProof(tampered).ok).toBe(false);
  });

  it('verifies with didkit when issued on a whole second, where the proof time has no fraction', async () => {
    const onTheSecond = issueCredential({
      privateKey,
      address: holder,
      provider: 'Github',
      nullifiers: ['v0:Github:1', 'v0:Github:2'],
      issuedAt: new Date('2026-11-21T09:30:15Z'),
      expiresAt,
    });
    expect(onTheSecond.proof.created).toBe('2026-11-21T09:30:15Z');
    expect(await didkitErrors(onTheSecond)).toEqual([]);
    expect(verifiedBy(onTheSecond).nullifiers).toEqual(['v0:Github:1', 'v0:Github:2']);
  });

  it('verifies with didkit for a fresh key and the current time', async () => {
    const key = await loadOrCreateIssuerKey(await newDirectory());
    const fresh = issueCredential({ privateKey: key, address: holder, provider: 'Discord', expiresAt });
    expect(await didkitErrors(fresh)).toEqual([]);
    expect(verifiedBy(fresh).issuer).toBe(issuerDidFromPrivateKey(key));
  });

  it('is deterministic for the same inputs (RFC 6979 signing)', () => {
    expect(issueCredential({ privateKey, address: holder, provider: 'Google', issuedAt, expiresAt })).toEqual(credential);
  });

  it('derives a stable default nullifier per issuer, provider and address', () => {
    const [nullifier] = credential.credentialSubject.nullifiers;
    expect(credential.credentialSubject.nullifiers).toHaveLength(1);
    expect(nullifier).toMatch(new RegExp(`^v0:Google:${holder.toLowerCase()}:[0-9a-f]{64}$`));
    const nullifierFor = (options: { key?: Hex; address?: string; provider?: string }) =>
      issueCredential({
        privateKey: options.key ?? privateKey,
        address: options.address ?? holder,
        provider: options.provider ?? 'Google',
        expiresAt,
      }).credentialSubject.nullifiers[0];
    expect(nullifierFor({})).toBe(nullifier);
    expect(nullifierFor({ address: holder.toLowerCase() })).toBe(nullifier);
    expect(nullifierFor({ address: `0x${'1'.repeat(40)}` })).not.toBe(nullifier);
    expect(nullifierFor({ provider: 'Twitter' })?.split(':')[3]).not.toBe(nullifier?.split(':')[3]);
    expect(nullifierFor({ key: '0x0000000000000000000000000000000000000000000000000000000000000001' })).not.toBe(nullifier);
  });

  it('refuses invalid input', () => {
    const valid = { privateKey, address: holder, provider: 'Google', expiresAt };
    expect(() => issueCredential({ ...valid, address: '0x1234' })).toThrow(/address/);
    expect(() => issueCredential({ ...valid, provider: '' })).toThrow(/provider/);
    expect(() => issueCredential({ ...valid, nullifiers: [] })).toThrow(/nullifiers/);
    expect(() => issueCredential({ ...valid, expiresAt: new Date('nope') })).toThrow(/expiresAt/);
    expect(() => issueCredential({ ...valid, privateKey: '0x00' })).toThrow(/private key/);
    expect(() => issueCredential({ ...valid, privateKey: `0x${'00'.repeat(32)}` })).toThrow(/private key/);
  });
});

describe('loadOrCreateIssuerKey', () => {

  it('creates a private key file readable only by its owner, then reads it back', async () => {
    const directory = join(await newDirectory(), 'nested', 'state');
    const key = await loadOrCreateIssuerKey(directory);
    expect(key).toMatch(/^0x[0-9a-f]{64}$/);
    const path = join(directory, DEV_ISSUER_KEY_FILE);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect((await readFile(path, 'utf8')).trim()).toBe(key);
    expect(await loadOrCreateIssuerKey(directory)).toBe(key);
  });

  it('gives concurrent first callers one key and leaves no stray files', async () => {
    const directory = await newDirectory();
    const keys = await Promise.all(Array.from({ length: 8 }, () => loadOrCreateIssuerKey(directory)));
    expect(new Set(keys).size).toBe(1);
    expect(await readdir(directory)).toEqual([DEV_ISSUER_KEY_FILE]);
  });

  it('refuses a key file that does not hold a key', async () => {
    const directory = await newDirectory();
    await writeFile(join(directory, DEV_ISSUER_KEY_FILE), 'not a key\n');
    await expect(loadOrCreateIssuerKey(directory)).rejects.toThrow(/does not hold a 0x-prefixed secp256k1 private key/);
  });
});
