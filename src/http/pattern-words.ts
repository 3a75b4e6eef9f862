/**
 * What each `pattern` of the route schemas asks for, in words: a validation error says
 * "must be a decimal number of at most 15 digits", not the regular expression. Keyed by the pattern
 * itself, so every schema that uses a pattern shares its words; test/http/errors-methods.test.ts
 * fails when a documented route has a pattern missing here.
 */
const patternWords: Record<string, string> = {
  '^0[xX][0-9a-fA-F]{40}$': 'must be 0x followed by 40 hexadecimal digits',
  '^0x[0-9a-fA-F]{40}$': 'must be 0x followed by 40 hexadecimal digits',
  '^0x[0-9a-f]{64}$': 'must be 0x followed by 64 lower-case hexadecimal digits',
  '^0x([0-9a-f]{2})*$': 'must be 0x followed by whole bytes in lower-case hexadecimal digits',
  '^[0-9]+$': 'must be a whole number written in decimal digits',
  '^[0-9]{1,15}$': 'must be a decimal number of at most 15 digits',
  '^[0-9]{1,78}$': 'must be a decimal number of at most 78 digits',
  '^[^\\u0000-\\u001f\\u007f]+$': 'must not contain control characters (such as line breaks or tabs)',
  '^[a-z0-9]{8}$': 'must be 8 lower-case letters or digits',
  '^\\d{1,12}(\\.\\d{1,5})?$': 'must be a non-negative decimal number with at most 12 digits before the point and 5 after it',
  '^\\d+(\\.\\d+)?$': 'must be a non-negative decimal number',
  '^bat_[A-Za-z0-9_-]{16}$': 'must be "bat_" followed by 16 letters, digits, "_" or "-"',
};

/** The words for a pattern; a pattern without any is still not shown (it means little to a person). */
export function describePattern(pattern: string): string {
  return patternWords[pattern] ?? 'is not in the accepted format';
}

/** Whether the pattern has words of its own (for the test that every route pattern does). */
export function hasPatternWords(pattern: string): boolean {
  return Object.hasOwn(patternWords, pattern);
}
