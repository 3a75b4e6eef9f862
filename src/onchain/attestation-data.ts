/**
 * What an attestation says, as the EAS schemas encode it (pure: no I/O, no clock). The score
 * schema carries the v2 score object's fields as integers of 10⁻⁴ (`score_decimals` = 4), read
 * from the decimal text itself so that no binary floating point touches them; the passport schema
 * the address's live, valid stamps.
 */
import { type Hex } from 'viem';
import { bytesHex, hexBytes, WORD, writeUint } from '../chain/abi-words.js';
import { keccak256Bytes } from '../chain/keccak.js';
import type { V2Score } from '../scoring/scores/v2-scores.service.js';
import { schemaStrings } from './interface-files.js';

export const SCORE_DECIMALS = 4;
const UNITS = 10n ** BigInt(SCORE_DECIMALS);
const UINT32_MAX = 2n ** 32n - 1n;
const DAY_SECONDS = 86_400;

// The encoders below write these two layouts directly; tests compare them with viem's encoder of
// the schema strings, and a changed schema string stops the service at start-up.
const SCORE_SCHEMA = 'bool passing_score, uint8 score_decimals, uint128 scorer_id, uint32 score, uint32 threshold, (string provider, uint256 score)[] stamps';
const PASSPORT_SCHEMA = '(string provider, bytes32 hash, uint64 issuance_date, uint64 expiration_date)[] stamps';
if (schemaStrings.score !== SCORE_SCHEMA || schemaStrings.passport !== PASSPORT_SCHEMA) throw new Error('contracts/abi/schemas.json changed: update the encoders of attestation-data.ts');

export interface ScoreFields {
  passing_score: boolean;
  score_decimals: number;
  scorer_id: bigint;
  score: number;
  threshold: number;
  stamps: { provider: string; score: bigint }[];
}

/** A stored stamp, as the passport schema needs it. */
export interface PassportStampSource {
  provider: string;
  nullifiers: readonly string[];
  /** Epoch milliseconds. */
  issuanceDate: number;
  expirationDate: number;
}

export interface PassportStamp {
  provider: string;
  hash: Hex;
  issuance_date: bigint;
  expiration_date: bigint;
}

/**
 * A non-negative decimal text × 10⁴, truncated: "12.3456789" → 123456. A negative value (a
 * scorer with negative weights) is 0: the schema's integers are unsigned.
 */
export function decimalUnits(text: string): bigint {
  const match = /^(-)?(\d+)(?:\.(\d*))?$/.exec(text.trim());
  if (!match) throw new Error(`${JSON.stringify(text)} is not a decimal number`);
  if (match[1] !== undefined) return 0n;
  const fraction = (match[3] ?? '').padEnd(SCORE_DECIMALS, '0').slice(0, SCORE_DECIMALS);
  return BigInt(match[2] as string) * UNITS + BigInt(fraction);
}

/**
 * Units of 10⁻⁴ (what the decoder answers) as a v2 score's decimal text, 5 fraction digits, so the
 * two compare as text: 203456 → "20.34560".
 */
export function unitsText(units: bigint): string {
  return `${units / UNITS}.${(units % UNITS).toString().padStart(SCORE_DECIMALS, '0')}0`;
}

// A uint32 of 10⁻⁴ holds scores up to 429,496.7295; a larger one is shown as that maximum (no
// scorer's weights come near it, and a wrapped value would be a false statement).
function uint32Units(text: string): number {
  const units = decimalUnits(text);
  return Number(units > UINT32_MAX ? UINT32_MAX : units);
}

/** The score schema's fields of a v2 score object: `stamps` = the stamps that counted (score > 0, not deduplicated). */
export function scoreFields(score: V2Score, scorerId: number): ScoreFields {
  const stamps: ScoreFields['stamps'] = [];
  for (const [provider, stamp] of Object.entries(score.stamps)) {
    const units = decimalUnits(stamp.score);
    if (!stamp.dedup && units > 0n) stamps.push({ provider, score: units });
  }
  return {
    passing_score: score.passing_score,
    score_decimals: SCORE_DECIMALS,
    scorer_id: BigInt(scorerId),
    score: uint32Units(score.score),
    threshold: uint32Units(score.threshold),
    stamps,
  };
}

/** One element of an array of `(string, <static words>)` tuples: the string's UTF-8 and the words after it. */
interface StringTuple {
  text: Buffer;
  words: Uint8Array;
}

const paddedLength = (bytes: number) => Math.ceil(bytes / WORD) * WORD;

/**
 * The ABI encoding, at `target[start]`, of a dynamic array of dynamic tuples `(string, …static)`:
 * the length, one offset per element (from the end of the length word), then each element (the
 * string's offset, the static words, the string's length and padded bytes).
 */
function writeStringTupleArray(target: Uint8Array, start: number, tuples: readonly StringTuple[]): void {
  writeUint(target, start + WORD, tuples.length);
  const base = start + WORD;
  let at = base + tuples.length * WORD;
  tuples.forEach((tuple, index) => {
    writeUint(target, base + (index + 1) * WORD, at - base);
    const head = WORD + tuple.words.length;
    writeUint(target, at + WORD, head);
    target.set(tuple.words, at + WORD);
    writeUint(target, at + head + WORD, tuple.text.length);
    target.set(tuple.text, at + head + WORD);
    at += head + WORD + paddedLength(tuple.text.length);
  });
}

function stringTupleArrayBytes(tuples: readonly StringTuple[]): number {
  let total = WORD + tuples.length * WORD;
  for (const tuple of tuples) total += 2 * WORD + tuple.words.length + paddedLength(tuple.text.length);
  return total;
}

export function encodeScoreData(fields: ScoreFields): Hex {
  const tuples = fields.stamps.map((stamp) => {
    const words = new Uint8Array(WORD);
    writeUint(words, WORD, stamp.score);
    return { text: Buffer.from(stamp.provider, 'utf8'), words };
  });
  const head = 6 * WORD;
  const out = new Uint8Array(head + stringTupleArrayBytes(tuples));
  out[WORD - 1] = fields.passing_score ? 1 : 0;
  writeUint(out, 2 * WORD, fields.score_decimals, 1);
  writeUint(out, 3 * WORD, fields.scorer_id, 16);
  writeUint(out, 4 * WORD, fields.score, 4);
  writeUint(out, 5 * WORD, fields.threshold, 4);
  writeUint(out, 6 * WORD, head);
  writeStringTupleArray(out, head, tuples);
  return bytesHex(out);
}

/** keccak256 of the credential's first nullifier (its `hash` when it has no nullifiers: stored as its one nullifier). */
export function passportStamps(stamps: readonly PassportStampSource[]): PassportStamp[] {
  return stamps
    .map((stamp) => ({
      provider: stamp.provider,
      hash: bytesHex(keccak256Bytes(Buffer.from(stamp.nullifiers[0] ?? '', 'utf8'))),
      issuance_date: BigInt(Math.floor(stamp.issuanceDate / 1000)),
      expiration_date: BigInt(Math.floor(stamp.expirationDate / 1000)),
    }))
    .sort((a, b) => (a.provider < b.provider ? -1 : a.provider > b.provider ? 1 : Number(a.expiration_date - b.expiration_date)));
}

export function encodePassportData(stamps: readonly PassportStamp[]): Hex {
  const tuples = stamps.map((stamp) => {
    const words = new Uint8Array(3 * WORD);
    words.set(hexBytes(stamp.hash, WORD), 0);
    writeUint(words, 2 * WORD, stamp.issuance_date, 8);
    writeUint(words, 3 * WORD, stamp.expiration_date, 8);
    return { text: Buffer.from(stamp.provider, 'utf8'), words };
  });
  const out = new Uint8Array(WORD + stringTupleArrayBytes(tuples));
  writeUint(out, WORD, WORD);
  writeStringTupleArray(out, WORD, tuples);
  return bytesHex(out);
}

/**
 * An attestation's expirationTime in Unix seconds: the given expiry (ms; the score's, else the
 * earliest stamp's) capped at `ttlDays` after the signing time (`nowSeconds`).
 */
export function expirationSeconds(expiryMs: number | null, nowSeconds: number, ttlDays: number): bigint {
  const cap = nowSeconds + ttlDays * DAY_SECONDS;
  if (expiryMs === null) return BigInt(cap);
  return BigInt(Math.min(cap, Math.floor(expiryMs / 1000)));
}

/** The earliest expiry (ms) of these stamps; null when there are none. */
export function earliestExpiry(stamps: readonly PassportStampSource[]): number | null {
  let earliest: number | null = null;
  for (const stamp of stamps) if (earliest === null || stamp.expirationDate < earliest) earliest = stamp.expirationDate;
  return earliest;
}
