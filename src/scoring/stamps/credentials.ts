import { createHash } from 'node:crypto';
import type { Address, Hex } from 'viem';
import { Eip712EncodingError, hashTypedDataBytes, type TypedDataTypes } from '../../chain/eip712.js';
import { recoverAddressFromHash, SignatureError } from '../../chain/signatures.js';
import { type CredentialLimits, credentialLimitProblem, DEFAULT_CREDENTIAL_LIMITS } from './credential-intake.js';
import { stampSchemaProblem } from './stamp.schema.js';

/**
 * Stamp credentials: W3C verifiable credentials with an EthereumEip712Signature2021 proof
 * (https://w3c-ccg.github.io/ethereum-eip712-signature-2021-spec/).
 *
 * Checking a stamp is split in two. The proof check depends only on the credential's bytes,
 * so its outcome is cached by digest and a signature is recovered once per distinct
 * credential. The checks that depend on the moment and on configuration (trusted issuers,
 * expiry, whose passport is being scored) are cheap and run every time.
 */

export const PROOF_TYPE = 'EthereumEip712Signature2021';
export const PROOF_PURPOSE = 'assertionMethod';
export const DEFAULT_PROOF_CACHE_SIZE = 50_000;

export interface VerifiedCredential {
  /** The issuer DID, lower-case: `did:ethr:0x…`. */
  readonly issuer: string;
  readonly subjectAddress: Address;
  readonly provider: string;
  /** The credential's identity for deduplication; a legacy `hash` is a one-element list. */
  readonly nullifiers: readonly string[];
  readonly issuanceDate: Date;
  readonly expirationDate: Date;
  /** SHA-256 hex of the credential's canonical JSON. */
  readonly digest: string;
}

export type ProofResult =
  | { readonly ok: true; readonly credential: VerifiedCredential }
  | { readonly ok: false; readonly reason: string };

export type CredentialCheck = { readonly ok: true } | { readonly ok: false; readonly reason: string };

export interface CredentialCheckContext {
  readonly now: Date;
  /** Issuer DIDs (`did:ethr:0x…`); compared without regard to letter case. */
  readonly trustedIssuers: ReadonlySet<string>;
  /** The address being scored. */
  readonly address: string;
}

export interface ProofCacheStats {
  readonly hits: number;
  readonly misses: number;
  readonly size: number;
  readonly capacity: number;
}

// didkit derives only the network-less form (`keyToDID('ethr', …)`; `ethr:<network>` is
// refused), so that is the only form accepted.
const ISSUER_DID = /^did:ethr:0x[0-9a-fA-F]{40}$/;
const SUBJECT_DID_PREFIX = 'did:pkh:eip155:1:';
const SUBJECT_DID = /^did:pkh:eip155:1:0x[0-9a-fA-F]{40}$/;
const RFC3339_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$/i;
const PROOF_VALUE = /^0x[0-9a-fA-F]{130}$/;

type JsonObject = Record<string, unknown>;

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) {
    return `[${value.map((element) => (element === undefined ? 'null' : canonicalJson(element))).join(',')}]`;
  }
  if (isObject(value)) {
    const members: string[] = [];
    for (const key of Object.keys(value).sort()) {
      const member = value[key];
      if (member !== undefined && typeof member !== 'function') {
        members.push(`${JSON.stringify(key)}:${canonicalJson(member)}`);
      }
    }
    return `{${members.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * SHA-256 hex of the credential's JSON with object keys sorted at every level, so that the
 * same credential stored or sent with different key order or whitespace has one digest.
 * Throws for values JSON cannot represent (BigInt, cycles).
 */
export function credentialDigest(credential: unknown): string {
  return createHash('sha256').update(canonicalJson(credential)).digest('hex');
}

function parseDate(value: unknown): Date | undefined {
  if (typeof value !== 'string' || !RFC3339_DATE_TIME.test(value)) return undefined;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

function readNullifiers(subject: JsonObject): string[] | undefined {
  const { nullifiers, hash } = subject;
  if (nullifiers !== undefined) {
    if (!Array.isArray(nullifiers) || nullifiers.length === 0) return undefined;
    if (!nullifiers.every((nullifier) => typeof nullifier === 'string' && nullifier !== '')) return undefined;
    return [...(nullifiers as string[])];
  }
  if (typeof hash === 'string' && hash !== '') return [hash];
  return undefined;
}

function failure(reason: string): ProofResult {
  return { ok: false, reason };
}

function verifyProofWithDigest(credential: unknown, digest: string): ProofResult {
  if (!isObject(credential)) return failure('credential is not a JSON object');

  const { issuer, credentialSubject: subject, proof } = credential;
  if (typeof issuer !== 'string' || !ISSUER_DID.test(issuer)) {
    return failure('issuer is not a did:ethr DID of an Ethereum address');
  }
  if (!Array.isArray(credential.type) || !credential.type.includes('VerifiableCredential')) {
    return failure('credential type does not include VerifiableCredential');
  }
  if (!isObject(subject)) return failure('credential has no credentialSubject object');
  if (typeof subject.id !== 'string' || !SUBJECT_DID.test(subject.id)) {
    return failure('credential subject id is not a did:pkh:eip155:1 Ethereum address');
  }
  if (typeof subject.provider !== 'string' || subject.provider === '') {
    return failure('credential subject has no provider');
  }
  const nullifiers = readNullifiers(subject);
  if (nullifiers === undefined) {
    return failure('credential subject has neither a list of nullifiers nor a hash');
  }
  const issuanceDate = parseDate(credential.issuanceDate);
  if (issuanceDate === undefined) return failure('issuanceDate is not a valid date-time');
  const expirationDate = parseDate(credential.expirationDate);
  if (expirationDate === undefined) return failure('expirationDate is not a valid date-time');

  if (!isObject(proof)) return failure('credential has no proof');
  if (proof.type !== PROOF_TYPE) return failure(`proof type is not ${PROOF_TYPE}`);
  if (proof.proofPurpose !== PROOF_PURPOSE) return failure(`proof purpose is not ${PROOF_PURPOSE}`);
  if (proof.verificationMethod !== `${issuer}#controller`) {
    return failure("proof verification method is not the issuer's controller key");
  }
  if (typeof proof.proofValue !== 'string' || !PROOF_VALUE.test(proof.proofValue)) {
    return failure('proof value is not a 65-byte hex signature');
  }
  const { eip712Domain, proofValue, ...signedProof } = proof;
  const schemaProblem = stampSchemaProblem(eip712Domain);
  if (schemaProblem !== undefined) return failure(schemaProblem);
  if (!isObject(eip712Domain) || typeof eip712Domain.primaryType !== 'string' || !isObject(eip712Domain.domain)) {
    return failure('proof does not carry EIP-712 types, primary type and domain');
  }

  // The suite signs the credential with its proof object in place, minus the signature
  // itself and the EIP-712 schema that describes the message.
  const signedDocument = { ...credential, proof: signedProof };
  let digestToSign: Uint8Array;
  try {
    digestToSign = hashTypedDataBytes({
      types: eip712Domain.types as TypedDataTypes,
      primaryType: eip712Domain.primaryType,
      domain: eip712Domain.domain,
      message: signedDocument,
    });
  } catch (error) {
    if (error instanceof Eip712EncodingError) {
      return failure(`credential does not match the EIP-712 types in its proof: ${error.message}`);
    }
    throw error;
  }

  let signer: Address;
  try {
    signer = recoverAddressFromHash(digestToSign, proofValue as Hex);
  } catch (error) {
    if (error instanceof SignatureError) return failure(`proof signature is invalid: ${error.message}`);
    throw error;
  }
  const issuerDid = issuer.toLowerCase();
  if (`did:ethr:${signer}` !== issuerDid) return failure('proof signature does not match the issuer');

  const verified: VerifiedCredential = {
    issuer: issuerDid,
    subjectAddress: subject.id.slice(SUBJECT_DID_PREFIX.length).toLowerCase() as Address,
    provider: subject.provider,
    nullifiers: Object.freeze(nullifiers),
    issuanceDate,
    expirationDate,
    digest,
  };
  return { ok: true, credential: Object.freeze(verified) };
}

/**
 * The checks that bound the work of everything after them (size limits, the stamp schema),
 * run before the credential is digested or hashed; see credential-intake.ts.
 */
function boundedWorkProblem(credential: JsonObject, limits: CredentialLimits): string | undefined {
  const schemaProblem = isObject(credential.proof) ? stampSchemaProblem(credential.proof.eip712Domain) : undefined;
  return schemaProblem ?? credentialLimitProblem(credential, limits);
}

/**
 * Checks everything about a credential that does not depend on time or configuration:
 * its shape, and that its EIP-712 proof was signed by its issuer. Never throws.
 */
export function verifyCredentialProof(credential: unknown, limits: CredentialLimits = DEFAULT_CREDENTIAL_LIMITS): ProofResult {
  try {
    if (!isObject(credential)) return failure('credential is not a JSON object');
    const problem = boundedWorkProblem(credential, limits);
    if (problem !== undefined) return failure(problem);
    return verifyProofWithDigest(credential, credentialDigest(credential));
  } catch {
    return failure('credential could not be read');
  }
}

function isTrustedIssuer(issuer: string, trustedIssuers: ReadonlySet<string>): boolean {
  if (trustedIssuers.has(issuer)) return true;
  for (const trusted of trustedIssuers) {
    if (trusted.toLowerCase() === issuer) return true;
  }
  return false;
}

/** The checks that can change from one scoring to the next. */
export function checkCredentialAt(verified: VerifiedCredential, context: CredentialCheckContext): CredentialCheck {
  if (!isTrustedIssuer(verified.issuer, context.trustedIssuers)) {
    return { ok: false, reason: 'issuer is not trusted' };
  }
  if (context.now.getTime() >= verified.expirationDate.getTime()) {
    return { ok: false, reason: `credential expired at ${verified.expirationDate.toISOString()}` };
  }
  if (verified.subjectAddress !== context.address.toLowerCase()) {
    return { ok: false, reason: 'credential subject is a different address' };
  }
  return { ok: true };
}

export interface CredentialVerifierOptions {
  /** How many proof results to keep; the least recently used go first. */
  readonly cacheSize?: number;
  /** Size limits checked before a credential is digested (CREDENTIAL_MAX_DEPTH, CREDENTIAL_MAX_STRING_LENGTH). */
  readonly limits?: CredentialLimits;
}

/**
 * Proof verification with a bounded LRU of results keyed by credential digest. Failed proofs
 * are cached too: they fail the same way every time. Results are shared between callers and
 * must be treated as immutable.
 */
export class CredentialVerifier {
  readonly #capacity: number;
  readonly #limits: CredentialLimits;
  readonly #results = new Map<string, ProofResult>();
  #hits = 0;
  #misses = 0;

  constructor(options: CredentialVerifierOptions = {}) {
    const capacity = options.cacheSize ?? DEFAULT_PROOF_CACHE_SIZE;
    if (!Number.isInteger(capacity) || capacity < 0) {
      throw new RangeError('cacheSize must be a non-negative integer');
    }
    this.#capacity = capacity;
    this.#limits = options.limits ?? DEFAULT_CREDENTIAL_LIMITS;
  }

  verifyProof(credential: unknown): ProofResult {
    let digest: string;
    try {
      if (!isObject(credential)) return failure('credential is not a JSON object');
      // Not cached: these checks are as cheap as the digest that would key the cache.
      const problem = boundedWorkProblem(credential, this.#limits);
      if (problem !== undefined) return failure(problem);
      digest = credentialDigest(credential);
    } catch {
      return failure('credential could not be read');
    }
    const cached = this.#results.get(digest);
    if (cached !== undefined) {
      this.#hits++;
      // Re-inserting moves the entry to the young end of the Map's insertion order.
      this.#results.delete(digest);
      this.#results.set(digest, cached);
      return cached;
    }
    this.#misses++;
    let result: ProofResult;
    try {
      result = verifyProofWithDigest(credential, digest);
    } catch {
      return failure('credential could not be read');
    }
    if (this.#capacity > 0) {
      this.#results.set(digest, result);
      if (this.#results.size > this.#capacity) {
        const oldest = this.#results.keys().next().value as string;
        this.#results.delete(oldest);
      }
    }
    return result;
  }

  checkCredentialAt(verified: VerifiedCredential, context: CredentialCheckContext): CredentialCheck {
    return checkCredentialAt(verified, context);
  }

  stats(): ProofCacheStats {
    return { hits: this.#hits, misses: this.#misses, size: this.#results.size, capacity: this.#capacity };
  }
}
