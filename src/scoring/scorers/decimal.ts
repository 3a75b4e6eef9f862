import Big from 'big.js';

/**
 * Exact decimal arithmetic for weights and scores. Everything goes through
 * big.js so that 0.1 + 0.2 is 0.3; binary floating point never touches a
 * weight or a score.
 *
 * The global `Big` settings (DP, RM, NE, PE) are never changed here and never
 * relied upon: addition and comparison are exact regardless of them, every
 * rounding passes its mode explicitly, and text is produced with `toFixed`,
 * which never switches to exponent notation.
 */

/** Fraction digits of a score, `rawScore` and `threshold` on the wire. */
export const SCORE_FRACTION_DIGITS = 5;

/** Thrown for text that is not a plain decimal number. */
export class DecimalFormatError extends Error {
  constructor(readonly text: string) {
    super(`${JSON.stringify(text)} is not a decimal number`);
    this.name = 'DecimalFormatError';
  }
}

// Deliberately narrower than what big.js accepts: no exponent, no leading
// "+", no bare ".5" or "5.", so a weight reads the same to people and to code.
const DECIMAL_PATTERN = /^-?\d+(\.\d+)?$/;

export function isDecimalText(text: unknown): text is string {
  return typeof text === 'string' && DECIMAL_PATTERN.test(text);
}

/** Parses `^-?\d+(\.\d+)?$` exactly; anything else throws DecimalFormatError. */
export function parseDecimal(text: string): Big {
  if (!isDecimalText(text)) throw new DecimalFormatError(String(text));
  return new Big(text);
}

/** Exact sum; the empty sum is 0. */
export function sumDecimals(values: Iterable<Big>): Big {
  let total = new Big('0');
  for (const value of values) total = total.plus(value);
  return total;
}

/**
 * Plain decimal text with every significant digit and no exponent
 * (`new Big('1e-8').toString()` would give "1e-8"); "-0" becomes "0".
 */
export function formatDecimal(value: Big): string {
  return withoutNegativeZero(value, value.toFixed());
}

/**
 * A score as sent on the wire: exactly five fraction digits, e.g. "21.75400".
 * Extra digits are rounded half-up, i.e. a tie goes away from zero
 * ("1.000005" → "1.00001", "-1.000005" → "-1.00001"), the rounding people
 * expect from a displayed number. A value that rounds to zero is "0.00000",
 * never "-0.00000".
 */
export function formatScore(value: Big): string {
  const rounded = value.round(SCORE_FRACTION_DIGITS, Big.roundHalfUp);
  return withoutNegativeZero(rounded, rounded.toFixed(SCORE_FRACTION_DIGITS));
}

function withoutNegativeZero(value: Big, text: string): string {
  return value.eq('0') && text.startsWith('-') ? text.slice(1) : text;
}
