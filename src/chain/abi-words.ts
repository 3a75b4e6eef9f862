/**
 * The 32-byte words that ABI encoding and EIP-712 hashing are made of, written straight into one
 * buffer: the encoders of the attestation's fixed types use these instead of viem's generic ones,
 * which re-parse the types and pass every value through hex text (most of an attestation's
 * signing time, with keccak). Hex goes in and out through Node's native codec.
 */
import { type Address, type Hex } from 'viem';
import { keccak256Bytes } from './keccak.js';

export const WORD = 32;

const ADDRESS_TEXT = /^0x[0-9a-fA-F]{40}$/;

/** The bytes of 0x-prefixed hex; exactly `length` of them when given. Throws on anything else. */
export function hexBytes(hex: string, length?: number): Buffer {
  // Node's decoder stops at the first pair that is not hex, so a complete decoding is the check
  // (a regular expression over a few kB of data costs as much as the decoding).
  const bytes = typeof hex === 'string' && hex.startsWith('0x') ? Buffer.from(hex.slice(2), 'hex') : Buffer.alloc(0);
  if (bytes.length * 2 !== hex.length - 2) throw new RangeError(`${JSON.stringify(String(hex).slice(0, 80))} is not 0x-prefixed hex of whole bytes`);
  if (length !== undefined && bytes.length !== length) throw new RangeError(`${hex.slice(0, 80)} is not ${length} bytes`);
  return bytes;
}

export function bytesHex(bytes: Uint8Array): Hex {
  return `0x${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('hex')}`;
}

/**
 * Writes the unsigned `value` big-endian into the `bytes` bytes ending at `end` (a word's
 * low-order end, or a packed field's). Throws when it does not fit.
 */
export function writeUint(target: Uint8Array, end: number, value: bigint | number, bytes = WORD): void {
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`${value} is not an unsigned integer`);
    if (bytes < 7 && value >= 2 ** (8 * bytes)) throw new RangeError(`${value} does not fit in ${bytes} bytes`);
    for (let i = end - 1; value > 0; i--) {
      target[i] = value % 256;
      value = Math.floor(value / 256);
    }
    return;
  }
  if (value < 0n || value >> BigInt(8 * bytes) !== 0n) throw new RangeError(`${value} does not fit in ${bytes} bytes`);
  // Whole 32-bit pieces: a bigint shift per byte costs more than the rest of the word.
  for (let i = end; value > 0n; i -= 4) {
    const piece = Number(value & 0xffffffffn);
    value >>= 32n;
    for (let j = 1; j <= 4 && i - j >= end - bytes; j++) target[i - j] = (piece >>> (8 * (j - 1))) & 0xff;
  }
}

/** A word holding the address (20 bytes, left-padded). */
export function writeAddressWord(target: Uint8Array, wordStart: number, address: string): void {
  if (!ADDRESS_TEXT.test(address)) throw new RangeError(`${JSON.stringify(address)} is not an address`);
  target.set(Buffer.from(address.slice(2), 'hex'), wordStart + WORD - 20);
}

const checksums = new Map<string, Address>();
const CHECKSUMS_KEPT = 4096;

/**
 * EIP-55 mixed-case form of an address (as viem's getAddress), remembered for the addresses
 * seen most recently: a chain's contracts are checksummed on every request.
 */
export function checksumAddress(address: string): Address {
  if (!ADDRESS_TEXT.test(address)) throw new RangeError(`${JSON.stringify(address)} is not an address`);
  const lower = address.toLowerCase();
  const known = checksums.get(lower);
  if (known !== undefined) return known;
  const digest = keccak256Bytes(Buffer.from(lower.slice(2), 'latin1'));
  let out = '0x';
  for (let i = 0; i < 40; i++) {
    const char = lower[i + 2] as string;
    const nibble = ((digest[i >> 1] as number) >> (i % 2 === 0 ? 4 : 0)) & 0x0f;
    out += nibble >= 8 ? char.toUpperCase() : char;
  }
  if (checksums.size >= CHECKSUMS_KEPT) checksums.clear();
  checksums.set(lower, out as Address);
  return out as Address;
}
