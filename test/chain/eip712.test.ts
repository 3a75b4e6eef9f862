import { readFileSync } from 'node:fs';
import { describe, it, expect } from 'vitest';
import { concat, hashTypedData as viemHashTypedData, keccak256, recoverAddress, toBytes, toHex, type Hex } from 'viem';
import {
  Eip712EncodingError,
  encodeType,
  hashDomain,
  hashStruct,
  hashType,
  hashTypedData,
  type TypedDataTypes,
} from '../../src/chain/eip712.js';

const mailTypes = {
  EIP712Domain: [
    { name: 'name', type: 'string' },
    { name: 'version', type: 'string' },
    { name: 'chainId', type: 'uint256' },
    { name: 'verifyingContract', type: 'address' },
  ],
  Person: [
    { name: 'name', type: 'string' },
    { name: 'wallet', type: 'address' },
  ],
  Mail: [
    { name: 'from', type: 'Person' },
    { name: 'to', type: 'Person' },
    { name: 'contents', type: 'string' },
  ],
} as const;

const mailDomain = {
  name: 'Ether Mail',
  version: '1',
  chainId: 1,
  verifyingContract: '0xCcCCccccCCCCcCCCCCCcCcCccCcCCCcCcccccccC',
} as const;

const mailMessage = {
  from: { name: 'Cow', wallet: '0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826' },
  to: { name: 'Bob', wallet: '0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB' },
  contents: 'Hello, Bob!',
} as const;

interface ReferenceCredential {
  proof: {
    proofValue: Hex;
    eip712Domain: { types: TypedDataTypes; primaryType: string; domain: Record<string, unknown> };
    [key: string]: unknown;
  };
  [key: string]: unknown;
}

const referenceCredentials = JSON.parse(
  readFileSync(new URL('../fixtures/reference-credentials-expired.json', import.meta.url), 'utf8'),
) as ReferenceCredential[];

function signedPartOf(credential: ReferenceCredential) {
  const { proofValue, eip712Domain, ...signedProof } = credential.proof;
  return {
    signature: proofValue,
    typedData: {
      types: eip712Domain.types,
      primaryType: eip712Domain.primaryType,
      domain: eip712Domain.domain,
      message: { ...credential, proof: signedProof },
    },
  };
}

describe('EIP-712 spec example (Mail)', () => {
  it('encodes and hashes the type as the EIP states', () => {
    expect(encodeType('Mail', mailTypes)).toBe('Mail(Person from,Person to,string contents)Person(string name,address wallet)');
    expect(hashType('Mail', mailTypes)).toBe('0xa0cedeb2dc280ba39b857546d74f5549c3a1d7bdc2dd96bf881f76108e23dac2');
  });

  it('produces the EIP example hashes', () => {
    expect(hashStruct('Mail', mailMessage, mailTypes)).toBe(
      '0xc52c0ee5d84264471806290a3f2c4cecfc5490626bf912d01f240d7a274b371e',
    );
    expect(hashDomain(mailDomain, mailTypes)).toBe('0xf2cee375fa42b42143804025fc449deafd50cc031ca257e0b194a650a912090f');
    expect(hashTypedData({ types: mailTypes, primaryType: 'Mail', domain: mailDomain, message: mailMessage })).toBe(
      '0xbe609aee343fb3c4b28e1df9e632fca64fcfaede20f02e86244efddf30957bd2',
    );
  });

  it('agrees with viem, including when EIP712Domain is left to be derived from the domain', () => {
    const { EIP712Domain: _explicit, ...typesWithoutDomain } = mailTypes;
    const expected = viemHashTypedData({ types: typesWithoutDomain, primaryType: 'Mail', domain: mailDomain, message: mailMessage });
    expect(hashTypedData({ types: typesWithoutDomain, primaryType: 'Mail', domain: mailDomain, message: mailMessage })).toBe(expected);
    expect(hashTypedData({ types: mailTypes, primaryType: 'Mail', domain: mailDomain, message: mailMessage })).toBe(expected);
  });
});

describe('arrays, nested structs and atoms', () => {
  const types = {
    Group: [
      { name: 'title', type: 'string' },
      { name: 'members', type: 'Person[]' },
      { name: 'tags', type: 'string[]' },
      { name: 'matrix', type: 'uint16[2][]' },
      { name: 'lead', type: 'Person' },
      { name: 'active', type: 'bool' },
      { name: 'balance', type: 'int64' },
      { name: 'supply', type: 'uint256' },
      { name: 'blob', type: 'bytes' },
      { name: 'tag4', type: 'bytes4' },
      { name: 'root', type: 'bytes32' },
    ],
    Person: [
      { name: 'name', type: 'string' },
      { name: 'wallet', type: 'address' },
      { name: 'badges', type: 'Badge[]' },
    ],
    Badge: [{ name: 'label', type: 'string' }],
  } as const;

  const message = {
    title: 'Zürich ✓ team',
    members: [
      { name: 'Ann', wallet: '0x1111111111111111111111111111111111111111', badges: [{ label: 'a' }, { label: 'b' }] },
      { name: 'Ben', wallet: '0x2222222222222222222222222222222222222222', badges: [] },
    ],
    tags: ['x', '', 'y'],
    matrix: [
      [1, 2],
      [65535, 0],
    ],
    lead: { name: 'Cid', wallet: '0x3333333333333333333333333333333333333333', badges: [{ label: 'lead' }] },
    active: true,
    balance: -42n,
    supply: 10n ** 70n,
    blob: '0xdeadbeef00',
    tag4: '0x01020304',
    root: `0x${'ab'.repeat(32)}`,
  } as const;

  const domain = { name: 'Test', version: '2', chainId: 10, salt: `0x${'01'.repeat(32)}` } as const;

  it('sorts dependencies after the primary type', () => {
    expect(encodeType('Group', types)).toBe(
      'Group(string title,Person[] members,string[] tags,uint16[2][] matrix,Person lead,bool active,int64 balance,uint256 supply,bytes blob,bytes4 tag4,bytes32 root)' +
        'Badge(string label)Person(string name,address wallet,Badge[] badges)',
    );
  });

  it('matches viem for every kind of member', () => {
    const expected = viemHashTypedData({ types, primaryType: 'Group', domain, message });
    expect(hashTypedData({ types, primaryType: 'Group', domain, message })).toBe(expected);
  });

  it('hashes a list as keccak256 of its concatenated encoded elements', () => {
    const stringList = { List: [{ name: 'items', type: 'string[]' }] } as const;
    const typeHash = keccak256(toBytes('List(string[] items)'));
    const elements = concat([keccak256(toBytes('a')), keccak256(toBytes('b'))]);
    expect(hashStruct('List', { items: ['a', 'b'] }, stringList)).toBe(keccak256(concat([typeHash, keccak256(elements)])));
    expect(hashStruct('List', { items: [] }, stringList)).toBe(keccak256(concat([typeHash, keccak256('0x')])));
  });
});

describe('JSON-LD names with @', () => {
  const credentialTypes = referenceCredentials[0]!.proof.eip712Domain.types;

  it('encodes struct and member names containing @, sorting @context first', () => {
    expect(encodeType('CredentialSubject', credentialTypes)).toBe(
      'CredentialSubject(@context @context,string[] nullifiers,string id,string provider)' +
        '@context(NullifiersContext nullifiers,string provider)' +
        'NullifiersContext(string @container,string @type)',
    );
    expect(encodeType('Document', credentialTypes)).toBe(
      'Document(string[] @context,CredentialSubject credentialSubject,string expirationDate,string issuanceDate,string issuer,Proof proof,string[] type)' +
        '@context(NullifiersContext nullifiers,string provider)' +
        'CredentialSubject(@context @context,string[] nullifiers,string id,string provider)' +
        'NullifiersContext(string @container,string @type)' +
        'Proof(string @context,string created,string proofPurpose,string type,string verificationMethod)',
    );
  });

  it('hashes the reference credentials to the digests their issuer signed', async () => {
    for (const credential of referenceCredentials) {
      const { signature, typedData } = signedPartOf(credential);
      const signer = await recoverAddress({ hash: hashTypedData(typedData), signature });
      expect(signer.toLowerCase()).toBe('0x018d103c154748e8d5a1d7658185125175457f84');
    }
  });

  it('is the plain EIP-712 algorithm: renaming the @ names gives the hash viem computes for the renamed types', () => {
    const rename = (name: string) => name.replace(/@/g, 'At');
    const { typedData } = signedPartOf(referenceCredentials[0]!);
    const renamedTypes = Object.fromEntries(
      Object.entries(typedData.types).map(([typeName, fields]) => [
        rename(typeName),
        fields.map((field) => ({ name: rename(field.name), type: rename(field.type) })),
      ]),
    );
    const renameKeys = (value: unknown): unknown =>
      Array.isArray(value)
        ? value.map(renameKeys)
        : typeof value === 'object' && value !== null
          ? Object.fromEntries(Object.entries(value).map(([key, inner]) => [rename(key), renameKeys(inner)]))
          : value;
    const renamed = {
      types: renamedTypes,
      primaryType: typedData.primaryType,
      domain: typedData.domain,
      message: renameKeys(typedData.message) as Record<string, unknown>,
    };
    expect(hashTypedData(renamed)).toBe(viemHashTypedData(renamed as Parameters<typeof viemHashTypedData>[0]));
  });
});

describe('repeated hashing', () => {
  it('gives the same results as viem while many distinct values come and go', () => {
    const types = { Note: [{ name: 'text', type: 'string' }, { name: 'data', type: 'bytes' }] } as const;
    const domain = { name: 'Notes' } as const;
    for (let index = 0; index < 6000; index++) {
      const message = { text: `note ${index % 3000}`, data: toHex(`payload ${index}`) } as const;
      const ours = hashTypedData({ types, primaryType: 'Note', domain, message });
      if (index % 97 === 0) expect(ours).toBe(viemHashTypedData({ types, primaryType: 'Note', domain, message }));
      else expect(ours).toMatch(/^0x[0-9a-f]{64}$/);
    }
  });
});

describe('strictness', () => {
  const types = {
    Outer: [
      { name: 'label', type: 'string' },
      { name: 'inner', type: 'Inner' },
    ],
    Inner: [{ name: 'value', type: 'uint8' }],
  } as const;

  it('refuses properties that have no member, so nothing unsigned can ride along', () => {
    expect(() => hashStruct('Outer', { label: 'a', inner: { value: 1 }, extra: 'x' }, types)).toThrow(Eip712EncodingError);
    expect(() => hashStruct('Outer', { label: 'a', inner: { value: 1, extra: true } }, types)).toThrow(/inner\.extra/);
  });

  it('encodes a missing struct member as a zero word but refuses a missing atom', () => {
    const typeHash = keccak256(toBytes(encodeType('Outer', types)));
    const expected = keccak256(concat([typeHash, keccak256(toBytes('a')), `0x${'00'.repeat(32)}`]));
    expect(hashStruct('Outer', { label: 'a' }, types)).toBe(expected);
    expect(() => hashStruct('Outer', { inner: { value: 1 } }, types)).toThrow(/"label" is missing/);
  });

  it('does not mistake inherited object properties for members or types', () => {
    const withConstructor = { Thing: [{ name: 'constructor', type: 'string' }] } as const;
    expect(() => hashStruct('Thing', {}, withConstructor)).toThrow(/"constructor" is missing/);
    expect(() => hashStruct('Thing', { constructor: 'x' }, withConstructor)).not.toThrow();
    expect(() => hashStruct('Thing', { constructor: 'x' }, { Thing: [{ name: 'constructor', type: 'toString' }] })).toThrow(
      /unknown type "toString"/,
    );
  });

  it('range-checks and shape-checks atoms', () => {
    const atoms = (type: string) => ({ A: [{ name: 'v', type }] });
    expect(() => hashStruct('A', { v: 256 }, atoms('uint8'))).toThrow(/out of range/);
    expect(() => hashStruct('A', { v: -1 }, atoms('uint8'))).toThrow(/out of range/);
    expect(() => hashStruct('A', { v: -128 }, atoms('int8'))).not.toThrow();
    expect(() => hashStruct('A', { v: '0x010203' }, atoms('bytes4'))).toThrow(/exactly 4 bytes/);
    expect(() => hashStruct('A', { v: '0x12' }, atoms('address'))).toThrow(/not an address/);
    expect(() => hashStruct('A', { v: 'yes' }, atoms('bool'))).toThrow(/not a boolean/);
    expect(() => hashStruct('A', { v: 1 }, atoms('string'))).toThrow(/not a string/);
    expect(() => hashStruct('A', { v: 1 }, atoms('uint'))).toThrow(/unknown type/);
    expect(() => hashStruct('A', { v: 1 }, atoms('uint7'))).toThrow(/unknown type/);
    expect(() => hashStruct('A', { v: ['a'] }, atoms('string[2]'))).toThrow(/exactly 2 elements/);
  });

  it('refuses names that would make the type string ambiguous, and malformed type lists', () => {
    expect(() => encodeType('A', { A: [{ name: 'a,string b', type: 'string' }] })).toThrow(Eip712EncodingError);
    expect(() => encodeType('A(', { 'A(': [{ name: 'a', type: 'string' }] })).toThrow(Eip712EncodingError);
    expect(() => encodeType('A', { A: 'nope' } as unknown as TypedDataTypes)).toThrow(Eip712EncodingError);
    expect(() => encodeType('Missing', {})).toThrow(/not defined/);
  });
});
