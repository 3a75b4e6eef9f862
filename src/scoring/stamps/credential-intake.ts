import { stampSchemaProblem } from './stamp.schema.js';

/**
 * The first look at a credential that arrives from outside (wallet routes, `stamps import`):
 * checks that cost microseconds and bound everything that comes after. In order: the issuer
 * against the trusted list (one short string), the EIP-712 schema against the stamp schema (a
 * comparison as long as the schema), then the size limits (a walk that stops at the value
 * limit). Only a credential that passes all three is hashed.
 */

export interface CredentialLimits {
  /** Deepest nesting of objects and arrays, the credential itself being level 1. */
  readonly maxDepth: number;
  /** Longest string, property names included, in UTF-16 code units. */
  readonly maxStringLength: number;
  /**
   * Most values (objects, arrays, strings, numbers, ...) in the credential. Hashing costs about
   * one keccak per value, so this is what bounds the proof check of a schema-valid credential
   * (100,000 nullifiers took over 4 s).
   */
  readonly maxValues: number;
}

/**
 * A real stamp nests 6 levels deep (credential → proof → eip712Domain → types → Document →
 * member), holds about 100 values (one more per extra nullifier) and its longest string is its
 * 132-character signature or a nullifier of about that size; the defaults leave room for longer
 * provider-specific nullifiers, a few hundred of them, and nothing else.
 */
export const DEFAULT_CREDENTIAL_LIMITS: CredentialLimits = Object.freeze({ maxDepth: 8, maxStringLength: 1024, maxValues: 400 });

export type IntakeVerdict =
  | { readonly ok: true }
  | {
      readonly ok: false;
      readonly reason: string;
      /**
       * True when the value is not a plausible stamp at all (over a limit, or not the stamp
       * schema): the wallet routes refuse the whole request with 400 for it. An untrusted
       * issuer is a plain rejection of that one credential.
       */
      readonly malformed: boolean;
      /** The provider the credential claims, unverified, to help the sender match the report. */
      readonly provider?: string;
    };

const ISSUER_DID = /^did:ethr:0x[0-9a-fA-F]{40}$/;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Why `value` breaks the limits, or undefined. Iterative, so hostile nesting cannot exhaust the
 * stack, and it stops at the value limit, so its own cost is bounded by the limits too.
 */
export function credentialLimitProblem(value: unknown, limits: CredentialLimits): string | undefined {
  const stack: { value: unknown; depth: number }[] = [{ value, depth: 1 }];
  let values = 1;
  const tooMany = `has more than ${limits.maxValues} values`;
  while (stack.length > 0) {
    const { value: current, depth } = stack.pop()!;
    if (typeof current === 'string') {
      if (current.length > limits.maxStringLength) return `has a string longer than ${limits.maxStringLength} characters`;
      continue;
    }
    if (typeof current !== 'object' || current === null) continue;
    if (depth > limits.maxDepth) return `nested deeper than ${limits.maxDepth} levels`;
    if (Array.isArray(current)) {
      if ((values += current.length) > limits.maxValues) return tooMany;
      for (const element of current) stack.push({ value: element, depth: depth + 1 });
      continue;
    }
    const keys = Object.keys(current);
    if ((values += keys.length) > limits.maxValues) return tooMany;
    for (const key of keys) {
      if (key.length > limits.maxStringLength) return `has a string longer than ${limits.maxStringLength} characters`;
      stack.push({ value: (current as Record<string, unknown>)[key], depth: depth + 1 });
    }
  }
  return undefined;
}

function isTrusted(issuer: string, trustedIssuers: ReadonlySet<string>): boolean {
  if (trustedIssuers.has(issuer)) return true;
  const lower = issuer.toLowerCase();
  for (const trusted of trustedIssuers) {
    if (trusted.toLowerCase() === lower) return true;
  }
  return false;
}

function claimedProvider(credential: Record<string, unknown>): { provider?: string } {
  const subject = credential.credentialSubject;
  return isRecord(subject) && typeof subject.provider === 'string' && subject.provider !== '' ? { provider: subject.provider } : {};
}

/** The intake checks of one credential, cheapest first; see the module comment. */
export function screenCredential(credential: unknown, limits: CredentialLimits, trustedIssuers: ReadonlySet<string>): IntakeVerdict {
  if (!isRecord(credential)) return { ok: false, reason: 'credential is not a JSON object', malformed: true };
  const { issuer } = credential;
  if (typeof issuer !== 'string' || !ISSUER_DID.test(issuer)) {
    return { ok: false, reason: 'issuer is not a did:ethr DID of an Ethereum address', malformed: false, ...claimedProvider(credential) };
  }
  if (!isTrusted(issuer, trustedIssuers)) {
    return { ok: false, reason: 'issuer is not trusted', malformed: false, ...claimedProvider(credential) };
  }
  const proof = credential.proof;
  if (!isRecord(proof)) return { ok: false, reason: 'credential has no proof', malformed: false, ...claimedProvider(credential) };
  const schemaProblem = stampSchemaProblem(proof.eip712Domain);
  if (schemaProblem !== undefined) return { ok: false, reason: schemaProblem, malformed: true };
  const overLimit = credentialLimitProblem(credential, limits);
  if (overLimit !== undefined) return { ok: false, reason: overLimit, malformed: true };
  return { ok: true };
}
