/**
 * Tables of values per input of an operation (parameters, body fields, raw bodies, content types,
 * headers, extra query parameters), each with what the answer must be where it matters.
 */
import { INTEGER_STRINGS, MALFORMED_ADDRESSES, MALFORMED_SIGNATURES, MALFORMED_TIMESTAMPS, MALFORMED_TOKENS, type Nasty, NASTY_CORE, NASTY_STRINGS, RAW_CORE, RAW_ESCAPES, WRONG_TYPES } from '../../helpers/abuse/nasty-inputs.js';
import type { OpenApiParameter } from '../../helpers/abuse/openapi.js';
import type { Expectation } from './abuse-run.js';

export interface Case {
  value: Nasty;
  expect?: Expectation;
}

export const text = (value: string, expect?: Expectation): Case => ({ value: { text: value }, expect });
export const raw = (value: string, expect?: Expectation): Case => ({ value: { raw: value }, expect });

export const accepts = (pattern: string | undefined, value: string) => pattern === undefined || new RegExp(pattern, 'u').test(value);
/** A parameter or field whose schema demands a wallet address (so a malformed one must get invalid_address). */
export const hasAddressPattern = (p: { name: string; schema?: { pattern?: string } }) =>
  /address/.test(p.name) && p.schema?.pattern !== undefined && accepts(p.schema.pattern, `0x${'ab'.repeat(20)}`) && !accepts(p.schema.pattern, '0x12');

/** Fixed cases for a parameter, with what each must get where the contract says so. */
export function casesFor(p: OpenApiParameter): Case[] {
  const type = p.schema?.type;
  // Every nasty string for identifiers and other constrained text; the core few where a table of its own follows.
  const full = type === 'string' && !accepts(p.schema?.pattern, 'Any text, 1.') && !/timestamp/.test(p.name);
  const cases: Case[] = full || p.in === 'path'
    ? [...NASTY_STRINGS.map((s) => text(s)), ...RAW_ESCAPES.map((s) => raw(s))]
    : [...NASTY_CORE.map((s) => text(s)), ...RAW_CORE.map((s) => raw(s))];
  if (type === 'integer' || type === 'number') {
    // The contract: limit and offset are non-negative integers, limit at most 1000.
    const mustRefuse = ['-1', '1.5', '1_000', '١', '１', 'NaN', '1,2', 'true', '[]'];
    const code = p.name === 'limit' ? 'invalid_limit' : p.name === 'offset' ? 'invalid_offset' : undefined;
    for (const value of INTEGER_STRINGS) {
      const refused = code !== undefined && (mustRefuse.includes(value) || (p.name === 'limit' && Number(value) > 1000));
      cases.push(text(value, refused ? { refuse: true, status: [400], code: [code] } : undefined));
    }
  }
  if (hasAddressPattern(p)) {
    for (const value of MALFORMED_ADDRESSES) cases.push(text(value, { refuse: true, status: [400], code: ['invalid_address'] }));
  }
  if (/timestamp/.test(p.name)) {
    const unparsable = [
      'yesterday',
      '2026-13-01T00:00:00Z',
      '2026-03-01T25:00:00Z',
      '2026-03-01T12:60:00Z',
      '2026-03-01T12:00:00+99:00',
      '2026-03-01T12:00:00ZZ',
      'NaN',
      '1e100',
    ];
    for (const value of MALFORMED_TIMESTAMPS) {
      cases.push(text(value, unparsable.includes(value) ? { refuse: true, status: [400], code: ['invalid_timestamp'] } : undefined));
    }
  }
  if (/token/.test(p.name)) for (const value of MALFORMED_TOKENS) cases.push(text(value));
  if (type === 'boolean') for (const value of ['yes', 'TRUE', '2', 'tru', '1.0', 'on']) cases.push(text(value));
  return cases;
}

/** Fixed JSON values for a body field. */
export function fieldCases(name: string, schema: OpenApiParameter['schema']): { value: unknown; expect?: Expectation }[] {
  const cases: { value: unknown; expect?: Expectation }[] = [
    ...NASTY_STRINGS.map((value) => ({ value })),
    ...WRONG_TYPES.map((value) => ({ value })),
  ];
  if (hasAddressPattern({ name, schema })) {
    for (const value of MALFORMED_ADDRESSES) cases.push({ value, expect: { refuse: true, status: [400], code: ['invalid_address'] } });
  }
  if (/signature/.test(name)) for (const value of MALFORMED_SIGNATURES) cases.push({ value });
  return cases;
}

export const MALFORMED_JSON: (string | Buffer)[] = [
  '{',
  '}',
  '{"a":}',
  '{"a":1,}',
  "{'a':1}",
  'nul',
  '{"a":NaN}',
  '{"a":Infinity}',
  '[1,2',
  '"unterminated',
  '{"a":"\\x41"}',
  '{"a":01}',
  '{"a":1}{"b":2}',
  '{"a":1} trailing',
  '/* comment */ {}',
  'undefined',
  '\u0000',
  Buffer.from([0xff, 0xfe, 0x7b, 0x00, 0x7d, 0x00]),
  Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xc0, 0xaf, 0x22, 0x7d]),
];

export const WELL_FORMED_NON_OBJECTS = ['null', '[]', '"text"', '1', 'true', '[{}]', '\ufeff{}', ' \n\t {} \n'];

export const CONTENT_TYPES: [string, Expectation][] = [
  ['text/plain', { status: [415], code: ['unsupported_media_type'] }],
  ['application/x-www-form-urlencoded', { status: [415], code: ['unsupported_media_type'] }],
  ['multipart/form-data; boundary=x', { status: [415], code: ['unsupported_media_type'] }],
  ['application/xml', { status: [415], code: ['unsupported_media_type'] }],
  ['application/json; charset=utf-16', {}],
  ['application/json; charset=latin1', {}],
  ['APPLICATION/JSON', {}],
  ['application/jsonx', {}],
  ['application/vnd.api+json', {}],
  ['application/json;;;;', {}],
  ['application/json, text/plain', {}],
  [';', {}],
  ['x'.repeat(2000), {}],
];

export const HEADER_JUNK: Record<string, string>[] = [
  { host: 'evil.example' },
  { host: 'a b' },
  { host: '[::1' },
  { host: '127.0.0.1:80@evil.example', 'x-forwarded-host': 'x'.repeat(2000) },
  { 'x-request-id': '../../<script>', 'accept-encoding': 'gzip;q=x, br, *' },
  { accept: 'application/xml;q=1, */*;q=0', origin: 'null' },
  { 'if-none-match': '*' },
  { 'if-none-match': ',,,W/', 'x-forwarded-for': 'not-an-ip, ::1, 999.1.1.1' },
  { 'if-none-match': 'x'.repeat(5000), 'x-forwarded-proto': 'javascript' },
];

export const EXTRA_QUERY = [
  '__proto__=x',
  '__proto__[polluted]=1',
  'constructor[prototype][polluted]=1',
  'constructor=1',
  'hasOwnProperty=1',
  'toString=1',
  '%00=1',
  `${'k'.repeat(5000)}=1`,
  '&&&',
  '=',
  '=x',
  'a=%ZZ',
  ';',
  'limit',
  'a=1&a=2&a=3',
];
