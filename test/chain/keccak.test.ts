import { randomBytes } from 'node:crypto';
import { bytesToHex, getAddress, keccak256 } from 'viem';
import { describe, expect, it } from 'vitest';
import { checksumAddress, hexBytes, writeUint } from '../../src/chain/abi-words.js';
import { keccak256Bytes } from '../../src/chain/keccak.js';

// viem's keccak256 (@noble/hashes) is the independent reference throughout.
describe('keccak256Bytes (WebAssembly)', () => {
  it('matches viem on every length up to five blocks, all padding cases included', () => {
    for (let length = 0; length <= 5 * 136 + 1; length++) {
      const input = randomBytes(length);
      expect(bytesToHex(keccak256Bytes(input)), `length ${length}: ${input.toString('hex')}`).toBe(keccak256(input));
    }
  });

  it('matches the published digests of the empty string and "abc"', () => {
    expect(bytesToHex(keccak256Bytes(new Uint8Array()))).toBe('0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470');
    expect(bytesToHex(keccak256Bytes(Buffer.from('abc')))).toBe('0x4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45');
  });

  it('grows its memory for a large input and stays right for small ones after it', () => {
    const large = randomBytes(300_000);
    expect(bytesToHex(keccak256Bytes(large))).toBe(keccak256(large));
    const small = randomBytes(40);
    expect(bytesToHex(keccak256Bytes(small))).toBe(keccak256(small));
  });

  it('does not read the input it was given before', () => {
    const first = new Uint8Array(300).fill(0xff);
    keccak256Bytes(first);
    expect(bytesToHex(keccak256Bytes(new Uint8Array(10)))).toBe(keccak256(new Uint8Array(10)));
  });

  it('hands out a fresh digest each time (not a view of its memory)', () => {
    const digest = keccak256Bytes(Buffer.from('a'));
    const copy = Uint8Array.from(digest);
    keccak256Bytes(Buffer.from('b'));
    expect(digest).toEqual(copy);
  });
});

describe('abi words', () => {
  it('checksums addresses as viem does, whatever case they come in', () => {
    for (let index = 0; index < 300; index++) {
      const address = `0x${randomBytes(20).toString('hex')}`;
      expect(checksumAddress(address)).toBe(getAddress(address));
      expect(checksumAddress(address.toUpperCase().replace('0X', '0x'))).toBe(getAddress(address));
    }
    expect(() => checksumAddress('0x1234')).toThrow(RangeError);
    expect(() => checksumAddress(`0x${'g'.repeat(40)}`)).toThrow(RangeError);
  });

  it('decodes hex strictly', () => {
    expect([...hexBytes('0x0aff')]).toEqual([10, 255]);
    expect(() => hexBytes('0xabc')).toThrow(RangeError);
    expect(() => hexBytes('0xzz')).toThrow(RangeError);
    expect(() => hexBytes('0x12zz34')).toThrow(RangeError);
    expect(() => hexBytes('0x12 4')).toThrow(RangeError);
    expect([...hexBytes('0x')]).toEqual([]);
    expect(() => hexBytes('abcd')).toThrow(RangeError);
    expect(() => hexBytes('0xabcd', 32)).toThrow(RangeError);
  });

  it('writes integers big-endian and refuses what does not fit', () => {
    const word = new Uint8Array(32);
    writeUint(word, 32, 2n ** 256n - 1n);
    expect(word.every((byte) => byte === 0xff)).toBe(true);
    const field = new Uint8Array(10);
    writeUint(field, 9, 0x0102030405060708n, 8);
    expect([...field]).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 0]);
    const small = new Uint8Array(4);
    writeUint(small, 4, 0x01020304, 4);
    expect([...small]).toEqual([1, 2, 3, 4]);
    expect(() => writeUint(new Uint8Array(32), 32, 2n ** 256n)).toThrow(RangeError);
    expect(() => writeUint(new Uint8Array(32), 32, -1n)).toThrow(RangeError);
    expect(() => writeUint(new Uint8Array(8), 8, 2n ** 64n, 8)).toThrow(RangeError);
    expect(() => writeUint(new Uint8Array(2), 2, 65_536, 2)).toThrow(RangeError);
    expect(() => writeUint(new Uint8Array(32), 32, 1.5)).toThrow(RangeError);
  });
});
