import { keccak256, toBytes, bytesToHex, type Hex } from 'viem';

/**
 * EIP-712 typed-data hashing (https://eips.ethereum.org/EIPS/eip-712).
 *
 * Written here rather than taken from viem because verifiable credentials signed with
 * EthereumEip712Signature2021 use JSON-LD names as struct and member names (a struct type
 * literally called `@context`, members called `@container`), which viem's validator refuses.
 *
 * Two choices go beyond the letter of the EIP, both taken from the reference credential
 * implementation (ssi/didkit) so that a signature means the same thing to both of us:
 * - a data property that has no member in its struct type is an error, because otherwise a
 *   signed document could carry unsigned content;
 * - a missing member whose type is a struct encodes as 32 zero bytes (as MetaMask's
 *   eth-sig-util v4 and ssi do); any other missing member is an error.
 */

export interface TypedDataField {
  readonly name: string;
  readonly type: string;
}

export type TypedDataTypes = Readonly<Record<string, readonly TypedDataField[]>>;

export interface TypedDataDefinition {
  readonly types: TypedDataTypes;
  readonly primaryType: string;
  readonly domain: Readonly<Record<string, unknown>>;
  readonly message: Readonly<Record<string, unknown>>;
}

export class Eip712EncodingError extends Error {
  override readonly name = 'Eip712EncodingError';
}

const WORD_BYTES = 32;
const ZERO_WORD = new Uint8Array(WORD_BYTES);
const TEXT_ENCODER = new TextEncoder();
const TYPED_DATA_PREFIX = new Uint8Array([0x19, 0x01]);

// Characters that would make `encodeType` ambiguous (two different type sets producing the
// same type string) are not allowed in struct or member names; `@` and the like are.
const FORBIDDEN_NAME_CHARACTERS = /[\s(),[\]]/;
const UINT_TYPE = /^uint(\d{1,3})$/;
const INT_TYPE = /^int(\d{1,3})$/;
const FIXED_BYTES_TYPE = /^bytes(\d{1,2})$/;
const ADDRESS_VALUE = /^0x[0-9a-fA-F]{40}$/;
const HEX_VALUE = /^0x(?:[0-9a-fA-F]{2})*$/;
const DECIMAL_INTEGER = /^-?\d+$/;
const HEX_INTEGER = /^0x[0-9a-fA-F]+$/;

const DOMAIN_FIELD_TYPES: Readonly<Record<string, string>> = {
  name: 'string',
  version: 'string',
  chainId: 'uint256',
  verifyingContract: 'address',
  salt: 'bytes32',
};

function hasOwn(object: object, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(object, key);
}

function isStructType(types: TypedDataTypes, typeName: string): boolean {
  return hasOwn(types, typeName);
}

function structFields(types: TypedDataTypes, typeName: string): readonly TypedDataField[] {
  const fields: unknown = hasOwn(types, typeName) ? types[typeName] : undefined;
  if (!Array.isArray(fields)) {
    throw new Eip712EncodingError(`struct type "${typeName}" is not defined as a list of members`);
  }
  for (const field of fields as unknown[]) {
    if (
      typeof field !== 'object' ||
      field === null ||
      typeof (field as TypedDataField).name !== 'string' ||
      typeof (field as TypedDataField).type !== 'string'
    ) {
      throw new Eip712EncodingError(`struct type "${typeName}" has a member without a string name and type`);
    }
    const { name, type } = field as TypedDataField;
    if (name === '' || FORBIDDEN_NAME_CHARACTERS.test(name)) {
      throw new Eip712EncodingError(`struct type "${typeName}" has an invalid member name "${name}"`);
    }
    if (type === '' || /[\s(),]/.test(type)) {
      throw new Eip712EncodingError(`member "${typeName}.${name}" has an invalid type "${type}"`);
    }
  }
  return fields as readonly TypedDataField[];
}

interface ArrayType {
  readonly elementType: string;
  readonly length: number | undefined;
}

function parseArrayType(type: string): ArrayType | undefined {
  if (!type.endsWith(']')) return undefined;
  const open = type.lastIndexOf('[');
  if (open <= 0) throw new Eip712EncodingError(`invalid array type "${type}"`);
  const lengthText = type.slice(open + 1, -1);
  if (lengthText !== '' && !/^[1-9]\d*$/.test(lengthText)) {
    throw new Eip712EncodingError(`invalid array length in type "${type}"`);
  }
  return { elementType: type.slice(0, open), length: lengthText === '' ? undefined : Number(lengthText) };
}

function baseTypeOf(type: string): string {
  const bracket = type.indexOf('[');
  return bracket === -1 ? type : type.slice(0, bracket);
}

function collectDependencies(types: TypedDataTypes, typeName: string, found: Set<string>): void {
  if (found.has(typeName) || !isStructType(types, typeName)) return;
  found.add(typeName);
  for (const field of structFields(types, typeName)) {
    collectDependencies(types, baseTypeOf(field.type), found);
  }
}

/** The EIP-712 `encodeType` string: the primary type, then its dependencies sorted by name. */
export function encodeType(primaryType: string, types: TypedDataTypes): string {
  if (!isStructType(types, primaryType)) {
    throw new Eip712EncodingError(`primary type "${primaryType}" is not defined`);
  }
  if (primaryType === '' || FORBIDDEN_NAME_CHARACTERS.test(primaryType)) {
    throw new Eip712EncodingError(`invalid struct type name "${primaryType}"`);
  }
  const dependencies = new Set<string>();
  collectDependencies(types, primaryType, dependencies);
  dependencies.delete(primaryType);
  // Plain code-unit order, which is what "sorted by name" means in the EIP and in the
  // reference implementations (so `@context` sorts before `CredentialSubject`).
  const ordered = [primaryType, ...[...dependencies].sort()];
  let encoded = '';
  for (const typeName of ordered) {
    if (FORBIDDEN_NAME_CHARACTERS.test(typeName)) {
      throw new Eip712EncodingError(`invalid struct type name "${typeName}"`);
    }
    const members = structFields(types, typeName).map((field) => `${field.type} ${field.name}`);
    encoded += `${typeName}(${members.join(',')})`;
  }
  return encoded;
}

export function hashType(primaryType: string, types: TypedDataTypes): Hex {
  return keccak256(TEXT_ENCODER.encode(encodeType(primaryType, types)));
}

// keccak256 runs in JavaScript (about 10 µs a call on the development machine) and one
// credential needs about forty, most over inputs that every credential shares: type strings,
// JSON-LD context URLs, the domain, fixed sub-structs. Small inputs are therefore remembered by their exact bytes (so
// a hit is always right) in a map that is emptied when full. Remembered digests are shared:
// they are only ever copied into other buffers, never handed out.
const MEMO_MAX_INPUT_BYTES = 512;
const MEMO_MAX_ENTRIES = 4096;
const rememberedDigests = new Map<string, Uint8Array>();

function remember(key: string, compute: () => Uint8Array): Uint8Array {
  let digest = rememberedDigests.get(key);
  if (digest === undefined) {
    digest = compute();
    if (rememberedDigests.size >= MEMO_MAX_ENTRIES) rememberedDigests.clear();
    rememberedDigests.set(key, digest);
  }
  return digest;
}

function keccakBytes(data: Uint8Array): Uint8Array {
  if (data.length > MEMO_MAX_INPUT_BYTES) return keccak256(data, 'bytes');
  const key = `b${Buffer.from(data.buffer, data.byteOffset, data.length).toString('latin1')}`;
  return remember(key, () => keccak256(data, 'bytes'));
}

function keccakText(text: string): Uint8Array {
  if (text.length > MEMO_MAX_INPUT_BYTES) return keccak256(TEXT_ENCODER.encode(text), 'bytes');
  return remember(`s${text}`, () => keccak256(TEXT_ENCODER.encode(text), 'bytes'));
}

function describe(path: string): string {
  return path === '' ? 'value' : `"${path}"`;
}

function parseInteger(value: unknown, path: string): bigint {
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) {
      throw new Eip712EncodingError(`${describe(path)} is not a safe integer`);
    }
    return BigInt(value);
  }
  if (typeof value === 'string' && (DECIMAL_INTEGER.test(value) || HEX_INTEGER.test(value))) {
    return BigInt(value);
  }
  throw new Eip712EncodingError(`${describe(path)} is not an integer`);
}

function integerWord(value: bigint, bits: number, signed: boolean, path: string): Uint8Array {
  const min = signed ? -(1n << BigInt(bits - 1)) : 0n;
  const max = signed ? (1n << BigInt(bits - 1)) - 1n : (1n << BigInt(bits)) - 1n;
  if (value < min || value > max) {
    throw new Eip712EncodingError(`${describe(path)} is out of range for ${signed ? 'int' : 'uint'}${bits}`);
  }
  let twosComplement = value < 0n ? (1n << 256n) + value : value;
  const word = new Uint8Array(WORD_BYTES);
  for (let index = WORD_BYTES - 1; index >= 0 && twosComplement > 0n; index--) {
    word[index] = Number(twosComplement & 0xffn);
    twosComplement >>= 8n;
  }
  return word;
}

function bytesValue(value: unknown, path: string): Uint8Array {
  if (value instanceof Uint8Array) return value;
  if (typeof value === 'string' && HEX_VALUE.test(value)) return toBytes(value as Hex);
  throw new Eip712EncodingError(`${describe(path)} is not a 0x-prefixed byte string`);
}

function validBitSize(bits: number): boolean {
  return bits >= 8 && bits <= 256 && bits % 8 === 0;
}

function encodeAtom(type: string, value: unknown, path: string): Uint8Array {
  if (type === 'string') {
    if (typeof value !== 'string') throw new Eip712EncodingError(`${describe(path)} is not a string`);
    return keccakText(value);
  }
  if (type === 'bytes') return keccakBytes(bytesValue(value, path));
  if (type === 'bool') {
    if (typeof value !== 'boolean') throw new Eip712EncodingError(`${describe(path)} is not a boolean`);
    const word = new Uint8Array(WORD_BYTES);
    word[WORD_BYTES - 1] = value ? 1 : 0;
    return word;
  }
  if (type === 'address') {
    if (typeof value !== 'string' || !ADDRESS_VALUE.test(value)) {
      throw new Eip712EncodingError(`${describe(path)} is not an address`);
    }
    const word = new Uint8Array(WORD_BYTES);
    word.set(toBytes(value as Hex), WORD_BYTES - 20);
    return word;
  }
  const uintMatch = UINT_TYPE.exec(type);
  const intMatch = uintMatch ? null : INT_TYPE.exec(type);
  const integerMatch = uintMatch ?? intMatch;
  if (integerMatch) {
    const bits = Number(integerMatch[1]);
    if (!validBitSize(bits)) throw new Eip712EncodingError(`unknown type "${type}"`);
    return integerWord(parseInteger(value, path), bits, intMatch !== null, path);
  }
  const fixedBytesMatch = FIXED_BYTES_TYPE.exec(type);
  if (fixedBytesMatch) {
    const size = Number(fixedBytesMatch[1]);
    if (size < 1 || size > WORD_BYTES) throw new Eip712EncodingError(`unknown type "${type}"`);
    const bytes = bytesValue(value, path);
    if (bytes.length !== size) {
      throw new Eip712EncodingError(`${describe(path)} must be exactly ${size} bytes for ${type}`);
    }
    const word = new Uint8Array(WORD_BYTES);
    word.set(bytes, 0);
    return word;
  }
  throw new Eip712EncodingError(`unknown type "${type}"`);
}

// Type hashes are memoised per hashing run: a list of structs would otherwise re-derive the
// same type string once per element.
interface EncodingRun {
  readonly types: TypedDataTypes;
  readonly typeHashes: Map<string, Uint8Array>;
}

function newRun(types: TypedDataTypes): EncodingRun {
  return { types, typeHashes: new Map() };
}

function typeHashOf(run: EncodingRun, typeName: string): Uint8Array {
  let typeHash = run.typeHashes.get(typeName);
  if (typeHash === undefined) {
    typeHash = keccakText(encodeType(typeName, run.types));
    run.typeHashes.set(typeName, typeHash);
  }
  return typeHash;
}

function encodeValue(run: EncodingRun, type: string, value: unknown, path: string): Uint8Array {
  const { types } = run;
  if (isStructType(types, type)) return hashStructBytes(run, type, value, path);
  const arrayType = parseArrayType(type);
  if (arrayType) {
    if (!Array.isArray(value)) throw new Eip712EncodingError(`${describe(path)} is not an array`);
    if (arrayType.length !== undefined && value.length !== arrayType.length) {
      throw new Eip712EncodingError(`${describe(path)} must have exactly ${arrayType.length} elements`);
    }
    const concatenated = new Uint8Array(value.length * WORD_BYTES);
    value.forEach((element: unknown, index) => {
      concatenated.set(encodeValue(run, arrayType.elementType, element, `${path}[${index}]`), index * WORD_BYTES);
    });
    return keccakBytes(concatenated);
  }
  return encodeAtom(type, value, path);
}

function hashStructBytes(run: EncodingRun, typeName: string, data: unknown, path: string): Uint8Array {
  const { types } = run;
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    throw new Eip712EncodingError(`${describe(path)} is not an object for struct type "${typeName}"`);
  }
  const record = data as Record<string, unknown>;
  const fields = structFields(types, typeName);
  const fieldNames = new Set(fields.map((field) => field.name));
  for (const key of Object.keys(record)) {
    if (record[key] !== undefined && !fieldNames.has(key)) {
      throw new Eip712EncodingError(
        `property "${path === '' ? key : `${path}.${key}`}" has no member in struct type "${typeName}"`,
      );
    }
  }
  const encoded = new Uint8Array((fields.length + 1) * WORD_BYTES);
  encoded.set(typeHashOf(run, typeName), 0);
  fields.forEach((field, index) => {
    const memberPath = path === '' ? field.name : `${path}.${field.name}`;
    const value = hasOwn(record, field.name) ? record[field.name] : undefined;
    let word: Uint8Array;
    if (value === undefined) {
      if (!isStructType(types, field.type)) {
        throw new Eip712EncodingError(`${describe(memberPath)} is missing`);
      }
      word = ZERO_WORD;
    } else {
      word = encodeValue(run, field.type, value, memberPath);
    }
    encoded.set(word, (index + 1) * WORD_BYTES);
  });
  return keccakBytes(encoded);
}

/** `hashStruct(s) = keccak256(typeHash ‖ encodeData(s))`. */
export function hashStruct(primaryType: string, data: Readonly<Record<string, unknown>>, types: TypedDataTypes): Hex {
  return bytesToHex(hashStructBytes(newRun(types), primaryType, data, ''));
}

function domainTypes(types: TypedDataTypes, domain: Readonly<Record<string, unknown>>): TypedDataTypes {
  if (isStructType(types, 'EIP712Domain')) return types;
  // Like viem and ethers: without an explicit EIP712Domain, the members are the standard
  // domain fields that are present, in the order the EIP lists them.
  const fields: TypedDataField[] = [];
  for (const [name, type] of Object.entries(DOMAIN_FIELD_TYPES)) {
    if (hasOwn(domain, name) && domain[name] !== undefined && domain[name] !== null) fields.push({ name, type });
  }
  return { ...types, EIP712Domain: fields };
}

export function hashDomain(domain: Readonly<Record<string, unknown>>, types: TypedDataTypes): Hex {
  return hashStruct('EIP712Domain', domain, domainTypes(types, domain));
}

/** The digest an EIP-712 signer signs: `keccak256(0x1901 ‖ domainSeparator ‖ hashStruct(message))`. */
export function hashTypedData(typedData: TypedDataDefinition): Hex {
  return bytesToHex(hashTypedDataBytes(typedData));
}

export function hashTypedDataBytes({ types, primaryType, domain, message }: TypedDataDefinition): Uint8Array {
  if (typeof types !== 'object' || types === null || Array.isArray(types)) {
    throw new Eip712EncodingError('types is not an object');
  }
  if (typeof primaryType !== 'string') throw new Eip712EncodingError('primaryType is not a string');
  if (typeof domain !== 'object' || domain === null || Array.isArray(domain)) {
    throw new Eip712EncodingError('domain is not an object');
  }
  const run = newRun(domainTypes(types, domain));
  const domainSeparator = hashStructBytes(run, 'EIP712Domain', domain, 'domain');
  const parts = [TYPED_DATA_PREFIX, domainSeparator];
  if (primaryType !== 'EIP712Domain') parts.push(hashStructBytes(run, primaryType, message, ''));
  const encoded = new Uint8Array(parts.reduce((total, part) => total + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    encoded.set(part, offset);
    offset += part.length;
  }
  return keccak256(encoded, 'bytes');
}
