import { AppError } from '../errors.js';

/**
 * Wire formats of the public data API: `date_time`, decimals and their order
 * keys. Money stays decimal text end to end; it becomes a JSON number only
 * where the interface asks for a float, at rendering, with no arithmetic.
 */

/** `date_time`: ISO 8601 with milliseconds and `Z`, e.g. `2026-03-01T12:00:00.000Z`. */
export function formatDateTime(epochMs: number): string {
  return new Date(epochMs).toISOString();
}

const NON_NEGATIVE_DECIMAL = /^\d+(\.\d+)?$/;

/** Integer digits an order key holds (a uint256 has 78). */
export const ORDER_KEY_INTEGER_DIGITS = 80;

/** A non-negative plain decimal (`12`, `0.5`, `1000000000000000000.00`), no sign, exponent or bare point. */
export function isNonNegativeDecimal(text: unknown): text is string {
  if (typeof text !== 'string' || !NON_NEGATIVE_DECIMAL.test(text)) return false;
  return text.split('.')[0]!.replace(/^0+(?=\d)/, '').length <= ORDER_KEY_INTEGER_DIGITS;
}

/**
 * Text whose code-point order is the numeric order of non-negative decimals:
 * the integer part zero-padded to a fixed width, then the fraction without
 * trailing zeros (`1.50` and `1.5` get the same key). Null (no value) is the
 * empty string, which sorts before every number on both databases.
 */
export function decimalOrderKey(text: string | null): string {
  if (text === null) return '';
  const [integer = '0', fraction = ''] = text.split('.');
  const digits = integer.replace(/^0+/, '');
  const trimmed = fraction.replace(/0+$/, '');
  return digits.padStart(ORDER_KEY_INTEGER_DIGITS, '0') + (trimmed ? `.${trimmed}` : '');
}

/** A decimal text as the JSON number the interface shows for floats (no arithmetic happens on it). */
export function decimalAsNumber(text: string | null): number | null {
  return text === null ? null : Number(text);
}

/**
 * Refuses a NUL character in a text parameter (400 `invalid_parameter`):
 * PostgreSQL text cannot hold one, so it would otherwise fail inside a query.
 */
export function checkText(name: string, value: string): string {
  if (value.includes('\u0000')) throw new AppError('invalid_parameter', `${name} must not contain NUL characters.`);
  return value;
}

/** Largest id a `pk` filter takes (the id columns are 32-bit integers on PostgreSQL). */
export const MAX_ID = 2_147_483_647;

/**
 * A list's `X-Total-Count` counts at most this many matches past the end of the page, then reports
 * `offset + limit + COUNT_AHEAD` (a lower bound): enough for the next link, at a bounded cost.
 */
export const COUNT_AHEAD = 1000;

/** Deepest `offset` a public list accepts: each step deeper costs a row read, so deep paging goes through filters. */
export const MAX_OFFSET = 10_000;

/**
 * The paging numbers a list accepts, checked in the domain too: the HTTP schema refuses
 * non-finite and unsafe integers (`x-safe-integer`), other callers may not, and a value past
 * these bounds would overflow the databases.
 */
export function checkPaging(query: { pk?: number; limit: number; offset: number }): void {
  if (query.pk !== undefined && !(Number.isSafeInteger(query.pk) && query.pk >= 1 && query.pk <= MAX_ID)) {
    throw new AppError('invalid_request', `pk must be a whole number from 1 to ${MAX_ID}.`);
  }
  if (!Number.isSafeInteger(query.limit) || query.limit < 0 || query.limit > 1000) {
    throw new AppError('invalid_limit', 'limit must be an integer from 0 to 1000.');
  }
  if (!Number.isSafeInteger(query.offset) || query.offset < 0) throw new AppError('invalid_offset', 'offset must be a non-negative integer.');
  if (query.offset > MAX_OFFSET) {
    throw new AppError('invalid_offset', `offset must be at most ${MAX_OFFSET}; page deeper with a filter (pk__gt on bounties).`);
  }
}

/** Parses JSON text stored by the import (objects and arrays it validated). */
export function parseStoredJson<T>(text: string): T {
  return JSON.parse(text) as T;
}
