import type { TypedDataTypes } from '../../chain/eip712.js';

/**
 * The EIP-712 schema of a stamp: the `proof.eip712Domain` that the reference issuer (the
 * passport IAM service, signing with didkit) puts in every EthereumEip712Signature2021 stamp,
 * taken from the reference credentials in shared/data. Intake accepts exactly this schema (or
 * its `hash` form, below) and nothing else, so that the cost of hashing a credential is fixed
 * by us, not by whoever sends it.
 */
export const STAMP_EIP712_TYPES = {
  '@context': [
    { name: 'nullifiers', type: 'NullifiersContext' },
    { name: 'provider', type: 'string' },
  ],
  CredentialSubject: [
    { name: '@context', type: '@context' },
    { name: 'nullifiers', type: 'string[]' },
    { name: 'id', type: 'string' },
    { name: 'provider', type: 'string' },
  ],
  Document: [
    { name: '@context', type: 'string[]' },
    { name: 'credentialSubject', type: 'CredentialSubject' },
    { name: 'expirationDate', type: 'string' },
    { name: 'issuanceDate', type: 'string' },
    { name: 'issuer', type: 'string' },
    { name: 'proof', type: 'Proof' },
    { name: 'type', type: 'string[]' },
  ],
  EIP712Domain: [{ name: 'name', type: 'string' }],
  NullifiersContext: [
    { name: '@container', type: 'string' },
    { name: '@type', type: 'string' },
  ],
  Proof: [
    { name: '@context', type: 'string' },
    { name: 'created', type: 'string' },
    { name: 'proofPurpose', type: 'string' },
    { name: 'type', type: 'string' },
    { name: 'verificationMethod', type: 'string' },
  ],
} as const satisfies TypedDataTypes;

/**
 * The same schema for the earlier stamps whose subject carries one `hash` instead of a list of
 * nullifiers (decisions.md: "`hash` or `nullifiers`"): the subject's `hash` is a plain string.
 */
export const HASH_STAMP_EIP712_TYPES = {
  '@context': [
    { name: 'hash', type: 'string' },
    { name: 'provider', type: 'string' },
  ],
  CredentialSubject: [
    { name: '@context', type: '@context' },
    { name: 'hash', type: 'string' },
    { name: 'id', type: 'string' },
    { name: 'provider', type: 'string' },
  ],
  Document: STAMP_EIP712_TYPES.Document,
  EIP712Domain: STAMP_EIP712_TYPES.EIP712Domain,
  Proof: STAMP_EIP712_TYPES.Proof,
} as const satisfies TypedDataTypes;

export const STAMP_PRIMARY_TYPE = 'Document' as const;

const ACCEPTED_SCHEMAS: readonly TypedDataTypes[] = [STAMP_EIP712_TYPES, HASH_STAMP_EIP712_TYPES];

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// Bails out at the first difference and never looks further into `types` than the expected
// schema reaches, so the comparison costs at most the size of the schema (a few dozen steps)
// whatever the sender put there.
function sameTypes(types: Record<string, unknown>, expected: TypedDataTypes): boolean {
  const typeNames = Object.keys(expected);
  let count = 0;
  for (const key in types) {
    if (!Object.prototype.hasOwnProperty.call(expected, key)) return false;
    if (++count > typeNames.length) return false;
  }
  if (count !== typeNames.length) return false;
  for (const typeName of typeNames) {
    const members = types[typeName];
    const expectedMembers = expected[typeName]!;
    if (!Array.isArray(members) || members.length !== expectedMembers.length) return false;
    for (let index = 0; index < expectedMembers.length; index++) {
      const member: unknown = members[index];
      const wanted = expectedMembers[index]!;
      if (!isRecord(member) || member.name !== wanted.name || member.type !== wanted.type) return false;
      let memberKeys = 0;
      for (const _key in member) memberKeys++;
      if (memberKeys !== 2) return false;
    }
  }
  return true;
}

/**
 * Why `eip712Domain` (a credential's `proof.eip712Domain`) is not the stamp schema, or
 * undefined when it is. The domain itself is left to the signature check: with the schema's
 * `EIP712Domain` it can only ever be hashed as one short string.
 */
export function stampSchemaProblem(eip712Domain: unknown): string | undefined {
  if (!isRecord(eip712Domain) || !isRecord(eip712Domain.types) || !isRecord(eip712Domain.domain)) {
    return 'proof does not carry EIP-712 types, primary type and domain';
  }
  if (eip712Domain.primaryType !== STAMP_PRIMARY_TYPE) {
    return `the EIP-712 primary type is not "${STAMP_PRIMARY_TYPE}"`;
  }
  const types = eip712Domain.types;
  if (!ACCEPTED_SCHEMAS.some((schema) => sameTypes(types, schema))) {
    return 'the EIP-712 types in the proof are not the stamp schema';
  }
  return undefined;
}
