import { randomBytes, randomInt } from 'node:crypto';
import { bytesToHex, encodeAbiParameters, keccak256, parseAbiParameters, stringToBytes } from 'viem';
import { describe, expect, it } from 'vitest';
import {
  decimalUnits,
  encodePassportData,
  encodeScoreData,
  expirationSeconds,
  passportStamps,
  scoreFields,
  unitsText,
} from '../../src/onchain/attestation-data.js';
import { schemaStrings } from '../../src/onchain/interface-files.js';
import { decodeSchemaData } from '../helpers/eas.js';
import type { V2Score } from '../../src/scoring/scores/v2-scores.service.js';

// The independent decoder: eas-sdk's own, as EAS explorers and indexers decode.
const decoded = decodeSchemaData;

const score: V2Score = {
  address: '0x5cdef6d4b2f8e6e1f3b0b0a5e3d2c1b0a9f8e7d6',
  score: '21.75400',
  passing_score: true,
  threshold: '20.00000',
  last_score_timestamp: '2026-01-01T00:00:00.000+00:00',
  expiration_timestamp: '2026-03-01T00:00:00.000+00:00',
  error: null,
  stamps: {
    Google: { score: '0.52500', dedup: false, expiration_date: '2026-03-01T00:00:00.000+00:00' },
    Ens: { score: '0.00000', dedup: true, expiration_date: '2026-03-02T00:00:00.000+00:00' },
    Github: { score: '21.22900', dedup: false, expiration_date: '2026-03-03T00:00:00.000+00:00' },
    Zero: { score: '0.00000', dedup: false, expiration_date: '2026-03-03T00:00:00.000+00:00' },
  },
  points_data: null,
  possible_points_data: null,
};

describe('score schema data', () => {
  it('takes decimals from the text, truncated to four digits, with no float error', () => {
    expect(decimalUnits('12.3456789')).toBe(123456n);
    expect(decimalUnits('0.00019')).toBe(1n);
    expect(decimalUnits('1.1')).toBe(11000n);
    expect(decimalUnits('7')).toBe(70000n);
    // 0.1 + 0.2 in binary floating point is 0.30000000000000004; 4.35 × 10⁴ is 43499.99…
    expect(decimalUnits('4.35000')).toBe(43500n);
    expect(decimalUnits('-3.5')).toBe(0n);
    expect(() => decimalUnits('1e3')).toThrow();
  });

  it('writes the decoder\'s units back as a v2 decimal text, exactly, for any uint256', () => {
    expect(unitsText(0n)).toBe('0.00000');
    expect(unitsText(1n)).toBe('0.00010');
    expect(unitsText(203_456n)).toBe('20.34560');
    expect(unitsText(70_000n)).toBe('7.00000');
    expect(unitsText(2n ** 256n - 1n)).toBe(`${(2n ** 256n - 1n) / 10_000n}.${(2n ** 256n - 1n) % 10_000n}0`);
    for (const text of ['12.34560', '0.00010', '429496.72950']) expect(unitsText(decimalUnits(text))).toBe(text);
  });

  it('decodes with eas-sdk field by field: counted stamps only, × 10⁴', () => {
    const data = encodeScoreData(scoreFields(score, 4242));
    const fields = decoded(schemaStrings.score, data);
    expect(fields).toEqual({
      passing_score: true,
      score_decimals: '4',
      scorer_id: '4242',
      score: '217540',
      threshold: '200000',
      stamps: [
        { provider: 'Google', score: '5250' },
        { provider: 'Github', score: '212290' },
      ],
    });
  });

  it('an unusual threshold keeps its digits exactly', () => {
    const fields = decoded(schemaStrings.score, encodeScoreData(scoreFields({ ...score, score: '12.3456789', threshold: '0.99999', passing_score: false }, 1)));
    expect(fields.score).toBe('123456');
    expect(fields.threshold).toBe('9999');
    expect(fields.passing_score).toBe(false);
  });
});

describe('passport schema data', () => {
  it('hashes the first nullifier and gives dates in Unix seconds', () => {
    const stamps = passportStamps([
      { provider: 'Google', nullifiers: ['v0.0.0:abc', 'v1:def'], issuanceDate: 1_700_000_000_500, expirationDate: 1_800_000_000_999 },
      { provider: 'Ens', nullifiers: ['hash-of-ens'], issuanceDate: 1_700_000_001_000, expirationDate: 1_800_000_001_000 },
    ]);
    const fields = decoded(schemaStrings.passport, encodePassportData(stamps));
    expect(fields.stamps).toEqual([
      { provider: 'Ens', hash: keccak256(stringToBytes('hash-of-ens')), issuance_date: '1700000001', expiration_date: '1800000001' },
      { provider: 'Google', hash: keccak256(stringToBytes('v0.0.0:abc')), issuance_date: '1700000000', expiration_date: '1800000000' },
    ]);
  });
});

describe('expirationTime', () => {
  it('is the expiry, capped at the TTL from the signing time', () => {
    expect(expirationSeconds(2_000_000_000_000, 1_000_000_000, 90)).toBe(BigInt(1_000_000_000 + 90 * 86_400));
    expect(expirationSeconds(1_000_500_000_999, 1_000_000_000, 90)).toBe(1_000_500_000n);
    expect(expirationSeconds(null, 1_000_000_000, 1)).toBe(1_000_086_400n);
  });
});

// viem's generic encoder of the schema strings is the independent reference of the hand-written ones.
describe('the schema encoders against viem', () => {
  const texts = ['', 'Google', 'x'.repeat(31), 'y'.repeat(32), 'z'.repeat(33), 'Ünïcødé ✓ 🛂', 'a'.repeat(200)];
  const text = () => (randomInt(3) === 0 ? (texts[randomInt(texts.length)] as string) : randomBytes(randomInt(0, 70)).toString('base64'));
  const uint = (bits: number) => (randomInt(4) === 0 ? (1n << BigInt(bits)) - 1n : BigInt(bytesToHex(randomBytes(bits / 8))));

  it('encodes the score schema as viem does', () => {
    const parameters = parseAbiParameters(schemaStrings.score);
    for (let index = 0; index < 300; index++) {
      const fields = {
        passing_score: randomInt(2) === 1,
        score_decimals: randomInt(256),
        scorer_id: uint(128),
        score: Number(uint(32)),
        threshold: Number(uint(32)),
        stamps: Array.from({ length: randomInt(0, 25) }, () => ({ provider: text(), score: uint(256) })),
      };
      const expected = encodeAbiParameters(parameters, [fields.passing_score, fields.score_decimals, fields.scorer_id, fields.score, fields.threshold, fields.stamps]);
      expect(encodeScoreData(fields)).toBe(expected);
    }
  });

  it('encodes the passport schema as viem does', () => {
    const parameters = parseAbiParameters(schemaStrings.passport);
    for (let index = 0; index < 300; index++) {
      const stamps = Array.from({ length: randomInt(0, 25) }, () => ({ provider: text(), hash: bytesToHex(randomBytes(32)), issuance_date: uint(64), expiration_date: uint(64) }));
      expect(encodePassportData(stamps)).toBe(encodeAbiParameters(parameters, [stamps]));
    }
  });

  it('refuses a value its field cannot hold', () => {
    const fields = scoreFields(score, 1);
    expect(() => encodeScoreData({ ...fields, scorer_id: 2n ** 128n })).toThrow(RangeError);
    expect(() => encodeScoreData({ ...fields, score_decimals: 256 })).toThrow(RangeError);
    expect(() => encodePassportData([{ provider: 'x', hash: '0x12', issuance_date: 0n, expiration_date: 0n }])).toThrow(RangeError);
  });
});
