import { describe, expect, it } from 'vitest';
import {
  DecimalFormatError,
  SCORE_FRACTION_DIGITS,
  formatDecimal,
  formatScore,
  isDecimalText,
  parseDecimal,
  sumDecimals,
} from '../../../src/scoring/scorers/decimal.js';

describe('parseDecimal', () => {
  it.each([
    ['0', '0'],
    ['20', '20'],
    ['-1.5', '-1.5'],
    ['0.525', '0.525'],
    ['16.021', '16.021'],
    ['007.10', '7.1'],
    ['123456789012345678901234567890.000000000000000000001', '123456789012345678901234567890.000000000000000000001'],
  ])('accepts %s exactly', (text, plain) => {
    expect(formatDecimal(parseDecimal(text))).toBe(plain);
    expect(parseDecimal(text).eq(parseDecimal(plain))).toBe(true);
    expect(isDecimalText(text)).toBe(true);
  });

  it('compares values of different scales exactly', () => {
    expect(parseDecimal('2.50').eq(parseDecimal('2.5'))).toBe(true);
    expect(parseDecimal('19.999996').gte(parseDecimal('20'))).toBe(false);
    expect(parseDecimal('20.000000000000000000001').gt(parseDecimal('20'))).toBe(true);
    expect(parseDecimal('-3').compare(parseDecimal('-2.999'))).toBe(-1);
    expect(formatDecimal(parseDecimal('10').minus(parseDecimal('7.399')))).toBe('2.601');
  });

  it.each(['', ' 1', '1 ', '1e3', '1E-2', 'NaN', 'Infinity', '-Infinity', '+1', '.5', '5.', '1,5', '0x10', '--1', '1.2.3', '-', '١٢'])(
    'rejects %j',
    (text) => {
      expect(() => parseDecimal(text)).toThrow(DecimalFormatError);
      expect(isDecimalText(text)).toBe(false);
    },
  );

  it('names the offending text', () => {
    expect(() => parseDecimal('abc')).toThrow('"abc" is not a decimal number');
  });

  it('refuses values that are not strings', () => {
    expect(isDecimalText(1.5)).toBe(false);
    expect(isDecimalText(null)).toBe(false);
    expect(() => parseDecimal(1.5 as unknown as string)).toThrow(DecimalFormatError);
  });
});

describe('sumDecimals', () => {
  it('adds exactly where binary floating point does not', () => {
    expect(0.1 + 0.2).not.toBe(0.3);
    expect(formatDecimal(sumDecimals([parseDecimal('0.1'), parseDecimal('0.2')]))).toBe('0.3');
    expect(0.7 + 0.1).toBeLessThan(0.8);
    expect(sumDecimals([parseDecimal('0.7'), parseDecimal('0.1')]).eq(parseDecimal('0.8'))).toBe(true);
  });

  it('keeps every digit of long sums', () => {
    const tenThousandCents = Array.from({ length: 10_000 }, () => parseDecimal('0.01'));
    expect(formatDecimal(sumDecimals(tenThousandCents))).toBe('100');
    expect(formatDecimal(sumDecimals([parseDecimal('1000000000000000000000'), parseDecimal('0.000000000000000000001')]))).toBe(
      '1000000000000000000000.000000000000000000001',
    );
  });

  it('is 0 for no values', () => {
    expect(formatDecimal(sumDecimals([]))).toBe('0');
  });

  it('adds values of different scales', () => {
    expect(formatScore(sumDecimals([parseDecimal('1.25')]))).toBe('1.25000');
    expect(formatScore(sumDecimals([]))).toBe('0.00000');
    expect(formatDecimal(sumDecimals([parseDecimal('16.021'), parseDecimal('0.5'), parseDecimal('3'), parseDecimal('-0.0001')]))).toBe('19.5209');
  });
});

describe('formatDecimal', () => {
  it('never uses exponent notation', () => {
    expect(formatDecimal(parseDecimal('0.00000001'))).toBe('0.00000001');
    expect(formatDecimal(parseDecimal('1000000000000000000000000'))).toBe('1000000000000000000000000');
  });

  it('drops insignificant zeros and the sign of zero', () => {
    expect(formatDecimal(parseDecimal('2.70'))).toBe('2.7');
    expect(formatDecimal(parseDecimal('-0.000'))).toBe('0');
  });
});

describe('formatScore', () => {
  it('always has five fraction digits', () => {
    expect(SCORE_FRACTION_DIGITS).toBe(5);
    expect(formatScore(parseDecimal('21.754'))).toBe('21.75400');
    expect(formatScore(parseDecimal('20'))).toBe('20.00000');
    expect(formatScore(parseDecimal('0'))).toBe('0.00000');
    expect(formatScore(parseDecimal('0.3'))).toBe('0.30000');
  });

  it('rounds a tie half-up, away from zero', () => {
    expect(formatScore(parseDecimal('1.000005'))).toBe('1.00001');
    expect(formatScore(parseDecimal('1.0000049999'))).toBe('1.00000');
    expect(formatScore(parseDecimal('2.999995'))).toBe('3.00000');
    expect(formatScore(parseDecimal('-1.000005'))).toBe('-1.00001');
    expect(formatScore(parseDecimal('-1.0000049'))).toBe('-1.00000');
  });

  it('never prints a negative zero', () => {
    expect(formatScore(parseDecimal('-0.000001'))).toBe('0.00000');
    expect(formatScore(parseDecimal('-0'))).toBe('0.00000');
  });

  it('rounds values with many more digits, and pads values with fewer', () => {
    expect(formatScore(parseDecimal('0.000004999999999999999999'))).toBe('0.00000');
    expect(formatScore(parseDecimal('0.000005000000000000000000'))).toBe('0.00001');
    expect(formatScore(parseDecimal('99999.999995'))).toBe('100000.00000');
    expect(formatScore(parseDecimal('123456789012345678901234567890.1'))).toBe('123456789012345678901234567890.10000');
    expect(formatScore(parseDecimal('-0.000005'))).toBe('-0.00001');
  });

  it('does not mutate its argument', () => {
    const value = parseDecimal('1.23456789');
    formatScore(value);
    expect(formatDecimal(value)).toBe('1.23456789');
  });
});
