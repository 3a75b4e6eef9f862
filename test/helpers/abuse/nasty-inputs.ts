/**
 * Nasty inputs for the abuse tests: percent-encoding that a careless client would produce, and
 * fixed tables of strings, numbers, addresses, timestamps, tokens, signatures and JSON values of
 * the wrong type.
 */

// ---------------------------------------------------------------------------------------------
// Encoding

const hex = (byte: number) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;

/**
 * Percent-encodes any JavaScript string, lone surrogates included (as the three WTF-8 bytes a
 * careless client would send; `encodeURIComponent` throws on them).
 */
export function encodeLoose(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    const next = text.charCodeAt(i + 1);
    if (unit >= 0xd800 && unit <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
      out += encodeURIComponent(text.slice(i, i + 2));
      i++;
    } else if (unit >= 0xd800 && unit <= 0xdfff) {
      out += hex(0xe0 | (unit >> 12)) + hex(0x80 | ((unit >> 6) & 0x3f)) + hex(0x80 | (unit & 0x3f));
    } else {
      out += encodeURIComponent(text[i]!);
    }
  }
  return out;
}


/** An input value: text to be encoded, or raw bytes already percent-encoded (possibly invalid on purpose). */
export type Nasty = { text: string } | { raw: string };

export const encoded = (value: Nasty): string => ('raw' in value ? value.raw : encodeLoose(value.text));
export const readable = (value: Nasty): string => ('raw' in value ? value.raw : value.text);

// ---------------------------------------------------------------------------------------------
// Nasty inputs

const longString = (n: number, unit = 'a') => unit.repeat(n);

/** Strings every text input gets. */
export const NASTY_STRINGS: string[] = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udfffy',
  '\uffff\ufffe',
  '\ufeffabc',
  '😀'.repeat(20),
  'e\u0301\u202e\u200b',
  '\n',
  '\r\nX-Injected: 1',
  "' OR 1=1 --",
  '1; DROP TABLE scores',
  '"; DROP TABLE scores; --',
  "') UNION SELECT * FROM api_keys --",
  '%',
  '%00',
  '\\',
  '../../../../etc/passwd',
  '<script>alert(1)</script>',
  '${7*7}{{7*7}}',
  '__proto__',
  'constructor',
  'null',
  'true',
  'NaN',
  '-1',
  longString(10_000),
  longString(3_000, 'é'),
];

/** The few of NASTY_STRINGS and RAW_ESCAPES that plain text filters get (the arbitraries cover the rest). */
export const NASTY_CORE: string[] = [
  '',
  '\u0000',
  'x\udfffy',
  '😀'.repeat(20),
  '\r\nX-Injected: 1',
  "' OR 1=1 --",
  '1; DROP TABLE scores',
  '%',
  '__proto__',
  longString(10_000),
];
export const RAW_CORE: string[] = ['%00', '%ED%A0%80', '%FF', '%zz'];

/** Bytes a browser would never send: invalid UTF-8 and invalid percent-escapes. */
export const RAW_ESCAPES: string[] = ['%00', '%ED%A0%80', '%FF', '%C0%AF', '%E2%82', '%', '%zz', '%2e%2e%2f', '%252e', '%u0041', '%0d%0a'];

/** For integers (limit, offset, pk, ids). */
export const INTEGER_STRINGS: string[] = [
  '-1',
  '-0',
  '1.5',
  '1.0',
  '1e3',
  '1e400',
  '01',
  '+1',
  ' 1',
  '0x10',
  '1_000',
  '١',
  '１',
  'NaN',
  'Infinity',
  '-Infinity',
  '2147483648',
  '9007199254740993',
  '9999999999999999999',
  '99999999999999999999999999999999',
  '1,2',
  'true',
  '[]',
];

const A40 = 'ab'.repeat(20);
/** For addresses. */
export const MALFORMED_ADDRESSES: string[] = [
  '0x',
  `0x${'a'.repeat(39)}`,
  `0x${'a'.repeat(41)}`,
  A40,
  `0x${'g'.repeat(40)}`,
  `0x ${A40.slice(1)}`,
  ` 0x${A40}`,
  `0x${A40} `,
  `0x${A40}\n`,
  `0x${A40}\u0000`,
  `0x${'０'.repeat(40)}`,
  `0x${'a'.repeat(38)}é`,
  'vitalik.eth',
  `did:pkh:eip155:1:0x${A40}`,
  `0x${A40}${'a'.repeat(10_000)}`,
  `0x0x${A40.slice(2)}`,
  `-0x${A40}`,
];

/** For ISO 8601 timestamps. */
export const MALFORMED_TIMESTAMPS: string[] = [
  'yesterday',
  '2026-13-01T00:00:00Z',
  '2026-02-30T00:00:00Z',
  '2026-03-01T25:00:00Z',
  '2026-03-01T12:00:00+99:00',
  '2026-03-01T12:60:00Z',
  '0000-00-00',
  '2026-03-01T12:00:00ZZ',
  '1e100',
  'NaN',
  '2026-03-01T12:00:00.1234567891234567Z',
  '-271821-04-20T00:00:00Z',
  '+275760-09-13T00:00:00.001Z',
  '9999999999999',
];

/** Near-miss and hostile page/session tokens. */
export const MALFORMED_TOKENS: string[] = [
  'p1.',
  'p1.LTE',
  'p1.OTk5OTk5OTk5OTk5',
  'p1.MS41',
  'p1.MA==',
  'p2.MA',
  'p1.' + 'A'.repeat(16),
  'p1.' + 'A'.repeat(61),
  'P1.MA',
  'p1.MA.extra',
];

/** A signature-looking string of the wrong shape. */
export const MALFORMED_SIGNATURES: string[] = [
  '0x',
  '0x00',
  `0x${'00'.repeat(65)}`,
  `0x${'ff'.repeat(65)}`,
  `0x${'zz'.repeat(65)}`,
  `0x${'11'.repeat(64)}`,
  `0x${'11'.repeat(66)}`,
  `${'11'.repeat(65)}`,
  `0X${'11'.repeat(65)}`,
  `0x${'1'.repeat(129)}`,
  `0x${'11'.repeat(64)}1b`,
  `0x${'11'.repeat(64)}05`,
];

/** Values of the wrong JSON type for any body field. */
export const WRONG_TYPES: unknown[] = [
  null,
  0,
  -1,
  1.5,
  1e308,
  -1e308,
  true,
  false,
  [],
  {},
  [null],
  ['x', 'y'],
  { $gt: '' },
  { __proto__: { polluted: true } },
  JSON.parse('{"__proto__": {"polluted": true}}'),
  Array.from({ length: 1000 }, (_, i) => i),
];
