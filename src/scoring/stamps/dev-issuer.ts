import { createHmac, randomBytes } from 'node:crypto';
import secp256k1 from 'secp256k1';
import { bytesToHex, type Hex } from 'viem';
import { hashTypedDataBytes } from '../../chain/eip712.js';
import { loadOrCreateKeyFile as loadOrCreateKeyFileOf } from '../../config/key-files.js';
import { addressFromPrivateKey, signHash } from '../../chain/signatures.js';
import { PROOF_PURPOSE, PROOF_TYPE } from './credentials.js';
// The schema intake accepts, so that what this issuer signs is always accepted.
import { STAMP_EIP712_TYPES, STAMP_PRIMARY_TYPE } from './stamp.schema.js';

/**
 * A development stamp issuer. Its credentials have exactly the shape of the reference
 * issuer's (the passport IAM service, signing with didkit), so that the whole scoring path
 * can be exercised locally and the result still verifies with didkit.
 */

export const DEV_ISSUER_KEY_FILE = 'dev-issuer.key';

const CREDENTIALS_CONTEXT = 'https://www.w3.org/2018/credentials/v1';
const STATUS_LIST_CONTEXT = 'https://w3id.org/vc/status-list/2021/v1';
const EIP712_SIGNATURE_CONTEXT = 'https://w3id.org/security/suites/eip712sig-2021/v1';
const SCHEMA_TEXT = 'https://schema.org/Text';
const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const PRIVATE_KEY = /^0x[0-9a-fA-F]{64}$/;


type Eip712Types = { [TypeName in keyof typeof STAMP_EIP712_TYPES]: { name: string; type: string }[] };

export interface StampCredential {
  '@context': string[];
  credentialSubject: {
    '@context': {
      nullifiers: { '@container': '@list'; '@type': string };
      provider: string;
    };
    id: string;
    nullifiers: string[];
    provider: string;
  };
  expirationDate: string;
  issuanceDate: string;
  issuer: string;
  proof: {
    '@context': string;
    created: string;
    eip712Domain: {
      domain: { name: string };
      primaryType: 'Document';
      types: Eip712Types;
    };
    proofPurpose: string;
    proofValue: Hex;
    type: string;
    verificationMethod: string;
  };
  type: string[];
}

export interface IssueCredentialOptions {
  readonly privateKey: Hex;
  /** The stamp holder's address; it becomes the subject `did:pkh:eip155:1:<address>`. */
  readonly address: string;
  readonly provider: string;
  readonly nullifiers?: readonly string[];
  /** Defaults to now. */
  readonly issuedAt?: Date;
  readonly expiresAt: Date;
}

function copyTypes(): Eip712Types {
  return Object.fromEntries(
    Object.entries(STAMP_EIP712_TYPES).map(([typeName, fields]) => [typeName, fields.map((field) => ({ ...field }))]),
  ) as Eip712Types;
}

// Dates are written the way didkit (chrono) serialises them when it rebuilds the signed
// document: whole seconds carry no fraction, otherwise milliseconds. Any other spelling of
// the same instant would be signed here but re-serialised differently by didkit.
function formatProofTimestamp(date: Date): string {
  const iso = date.toISOString();
  return iso.endsWith('.000Z') ? `${iso.slice(0, -5)}Z` : iso;
}

// The reference issuer states validity in whole seconds.
function formatWholeSeconds(date: Date): string {
  return `${date.toISOString().slice(0, 19)}Z`;
}

function requireValidDate(date: Date, name: string): void {
  if (!(date instanceof Date) || Number.isNaN(date.getTime())) throw new TypeError(`${name} is not a valid date`);
}

/** `did:ethr:0x…` (lower-case) of the key's Ethereum address. */
export function issuerDidFromPrivateKey(privateKey: Hex): string {
  return `did:ethr:${addressFromPrivateKey(privateKey)}`;
}

/**
 * The nullifier a real issuer would derive from the holder's account at the provider. A dev
 * issuer has no such account, so the stand-in is an HMAC of provider and address under the
 * issuer's key: re-issuing a stamp to the same address gives the same nullifier (the same
 * "account", as with a real provider), different addresses never collide by accident, and,
 * as with the real issuer's HMAC-ed ids, nobody without the key can predict it. To simulate
 * one provider account used by several addresses, pass explicit `nullifiers`.
 */
function defaultNullifier(privateKey: Hex, provider: string, address: string): string {
  const accountId = createHmac('sha256', Buffer.from(privateKey.slice(2), 'hex'))
    .update(`${provider}:${address}`)
    .digest('hex');
  return `v0:${provider}:${address}:${accountId}`;
}

export function issueCredential(options: IssueCredentialOptions): StampCredential {
  const { privateKey, provider, expiresAt } = options;
  const issuer = issuerDidFromPrivateKey(privateKey);
  const issuedAt = options.issuedAt ?? new Date();
  if (typeof options.address !== 'string' || !ADDRESS.test(options.address)) {
    throw new TypeError('address is not a 0x-prefixed 20-byte hex address');
  }
  if (typeof provider !== 'string' || provider === '') throw new TypeError('provider must be a non-empty string');
  requireValidDate(issuedAt, 'issuedAt');
  requireValidDate(expiresAt, 'expiresAt');
  const address = options.address.toLowerCase();
  const nullifiers = options.nullifiers ? [...options.nullifiers] : [defaultNullifier(privateKey, provider, address)];
  if (nullifiers.length === 0 || !nullifiers.every((nullifier) => typeof nullifier === 'string' && nullifier !== '')) {
    throw new TypeError('nullifiers must be a non-empty list of non-empty strings');
  }
  const eip712Domain = {
    domain: { name: 'VerifiableCredential' },
    primaryType: STAMP_PRIMARY_TYPE,
    types: copyTypes(),
  };
  const unsignedProof = {
    '@context': EIP712_SIGNATURE_CONTEXT,
    created: formatProofTimestamp(issuedAt),
    proofPurpose: PROOF_PURPOSE,
    type: PROOF_TYPE,
    verificationMethod: `${issuer}#controller`,
  };
  const document = {
    '@context': [CREDENTIALS_CONTEXT, STATUS_LIST_CONTEXT],
    credentialSubject: {
      '@context': {
        nullifiers: { '@container': '@list' as const, '@type': SCHEMA_TEXT },
        provider: SCHEMA_TEXT,
      },
      id: `did:pkh:eip155:1:${address}`,
      nullifiers,
      provider,
    },
    expirationDate: formatWholeSeconds(expiresAt),
    issuanceDate: formatWholeSeconds(issuedAt),
    issuer,
  };
  const digest = hashTypedDataBytes({
    types: eip712Domain.types,
    primaryType: eip712Domain.primaryType,
    domain: eip712Domain.domain,
    message: { ...document, proof: unsignedProof, type: ['VerifiableCredential'] },
  });
  const { created, proofPurpose, type, verificationMethod } = unsignedProof;
  return {
    ...document,
    proof: {
      '@context': unsignedProof['@context'],
      created,
      eip712Domain,
      proofPurpose,
      proofValue: signHash(privateKey, digest),
      type,
      verificationMethod,
    },
    type: ['VerifiableCredential'],
  };
}

function generatePrivateKey(): Hex {
  for (;;) {
    const candidate = randomBytes(32);
    if (secp256k1.privateKeyVerify(candidate)) return bytesToHex(candidate);
  }
}

function parseKeyFile(contents: string, path: string): Hex {
  const key = contents.trim();
  if (!PRIVATE_KEY.test(key) || !secp256k1.privateKeyVerify(Buffer.from(key.slice(2), 'hex'))) {
    throw new Error(`${path} does not hold a 0x-prefixed secp256k1 private key`);
  }
  return key.toLowerCase() as Hex;
}

/** The dev issuer's key from `<dir>/dev-issuer.key`, created (mode 0600) on first use. */
export async function loadOrCreateIssuerKey(dir: string): Promise<Hex> {
  return loadOrCreateKeyFile(dir, DEV_ISSUER_KEY_FILE);
}

/** A secp256k1 private key kept in `<dir>/<fileName>`, created (mode 0600) on first use. */
export async function loadOrCreateKeyFile(dir: string, fileName: string): Promise<Hex> {
  return loadOrCreateKeyFileOf(dir, fileName, { generate: generatePrivateKey, parse: parseKeyFile });
}
