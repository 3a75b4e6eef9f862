/**
 * Exact decimal arithmetic for weights and scores, on scaled integers: a value is an integer
 * number of units of 10^-scale (BigInt, so any number of digits), so 0.1 + 0.2 is 0.3 and binary
 * floating point never touches a weight or a score. Catalogue weights have three fraction digits:
 * a sum of them is a handful of BigInt additions at one scale, far cheaper than a decimal library.
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

const powers: bigint[] = [1n];

/** 10^n as a BigInt (kept: the same few scales recur). */
function pow10(n: number): bigint {
  for (let i = powers.length; i <= n; i++) powers.push((powers[i - 1] as bigint) * 10n);
  return powers[n] as bigint;
}

/** An exact decimal: `units` × 10^-`scale`. Immutable: every operation returns a new value. */
export class Decimal {
  private constructor(
    readonly units: bigint,
    readonly scale: number,
  ) {}

  static of(units: bigint, scale = 0): Decimal {
    return new Decimal(units, scale);
  }

  plus(other: Decimal): Decimal {
    if (this.scale === other.scale) return new Decimal(this.units + other.units, this.scale);
    return this.scale > other.scale
      ? new Decimal(this.units + other.units * pow10(this.scale - other.scale), this.scale)
      : new Decimal(this.units * pow10(other.scale - this.scale) + other.units, other.scale);
  }

  minus(other: Decimal): Decimal {
    return this.plus(new Decimal(-other.units, other.scale));
  }

  /** -1, 0 or 1 as this is below, equal to or above `other`. */
  compare(other: Decimal): number {
    const [a, b] =
      this.scale === other.scale
        ? [this.units, other.units]
        : this.scale > other.scale
          ? [this.units, other.units * pow10(this.scale - other.scale)]
          : [this.units * pow10(other.scale - this.scale), other.units];
    return a < b ? -1 : a > b ? 1 : 0;
  }

  eq(other: Decimal): boolean {
    return this.compare(other) === 0;
  }

  gt(other: Decimal): boolean {
    return this.compare(other) > 0;
  }

  gte(other: Decimal): boolean {
    return this.compare(other) >= 0;
  }

  /**
   * Text with exactly `digits` fraction digits, rounded half-up (a tie goes away from zero:
   * "1.000005" → "1.00001", "-1.000005" → "-1.00001"); a value that rounds to zero has no sign.
   */
  toFixed(digits: number): string {
    const negative = this.units < 0n;
    let magnitude = negative ? -this.units : this.units;
    if (this.scale <= digits) {
      magnitude *= pow10(digits - this.scale);
    } else {
      const divisor = pow10(this.scale - digits);
      const remainder = magnitude % divisor;
      magnitude /= divisor;
      if (remainder * 2n >= divisor) magnitude += 1n;
    }
    return placePoint(negative && magnitude !== 0n, magnitude, digits);
  }

  /** Plain text with every significant digit, no exponent and no insignificant zero; "-0" is "0". */
  toString(): string {
    let { units, scale } = this;
    while (scale > 0 && units % 10n === 0n) {
      units /= 10n;
      scale--;
    }
    const negative = units < 0n;
    return placePoint(negative, negative ? -units : units, scale);
  }
}

function placePoint(negative: boolean, magnitude: bigint, digits: number): string {
  const text = magnitude.toString();
  const sign = negative ? '-' : '';
  if (digits === 0) return sign + text;
  const padded = text.length > digits ? text : text.padStart(digits + 1, '0');
  return `${sign}${padded.slice(0, -digits)}.${padded.slice(-digits)}`;
}

export const ZERO = Decimal.of(0n);
export const ONE = Decimal.of(1n);

// Deliberately narrow: no exponent, no leading "+", no bare ".5" or "5.", so a weight reads the
// same to people and to code.
const DECIMAL_PATTERN = /^-?\d+(\.\d+)?$/;

export function isDecimalText(text: unknown): text is string {
  return typeof text === 'string' && DECIMAL_PATTERN.test(text);
}

/** Parses `^-?\d+(\.\d+)?$` exactly; anything else throws DecimalFormatError. */
export function parseDecimal(text: string): Decimal {
  if (!isDecimalText(text)) throw new DecimalFormatError(String(text));
  const point = text.indexOf('.');
  if (point < 0) return Decimal.of(BigInt(text));
  return Decimal.of(BigInt(text.slice(0, point) + text.slice(point + 1)), text.length - point - 1);
}

/** Exact sum; the empty sum is 0. */
export function sumDecimals(values: Iterable<Decimal>): Decimal {
  let total = ZERO;
  for (const value of values) total = total.plus(value);
  return total;
}

/**
 * Plain decimal text with every significant digit and no exponent (never "1e-8"); "-0" becomes "0".
 */
export function formatDecimal(value: Decimal): string {
  return value.toString();
}

/**
 * A score as sent on the wire: exactly five fraction digits, e.g. "21.75400". Extra digits are
 * rounded half-up, i.e. a tie goes away from zero ("1.000005" → "1.00001", "-1.000005" →
 * "-1.00001"), the rounding people expect from a displayed number. A value that rounds to zero
 * is "0.00000", never "-0.00000".
 */
export function formatScore(value: Decimal): string {
  return value.toFixed(SCORE_FRACTION_DIGITS);
}
