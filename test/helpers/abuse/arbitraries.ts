/**
 * fast-check arbitraries of nasty inputs for the abuse tests: any text, numbers as text, near
 * misses of a pattern, values for a schema, and deeply nested JSON.
 */
import fc from 'fast-check';
import { INTEGER_STRINGS, NASTY_STRINGS, WRONG_TYPES } from './nasty-inputs.js';
import type { JsonSchema } from './openapi.js';

const dangerousUnit = fc.constantFrom(
  ...['\u0000', '\ud800', '\udfff', '\uffff', '\u202e', '\n', ' ', 'é', '😀'],
  ...['%', "'", '"', ';', '-', '\\', '/', '.', '*', '?', '#', '&', '=', '+', '0', 'x', 'a'],
);

/** Any text: full Unicode (lone surrogates included), graphemes, and runs of dangerous characters. */
export const anyText: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ unit: dangerousUnit, maxLength: 40 }),
  fc.constantFrom(...NASTY_STRINGS),
);

/** Numbers of every kind, written as text. */
export const anyNumberText: fc.Arbitrary<string> = fc.oneof(
  fc.integer().map(String),
  fc.bigInt({ min: -(10n ** 40n), max: 10n ** 40n }).map(String),
  fc.double().map(String),
  fc.constantFrom(...INTEGER_STRINGS),
);

/** A near miss of a pattern: a matching value with one character inserted, removed or replaced. */
export function nearMiss(pattern: string): fc.Arbitrary<string> {
  return fc
    .tuple(fc.stringMatching(new RegExp(pattern)), fc.nat(), fc.constantFrom('insert', 'remove', 'replace'), fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }))
    .map(([valid, at, how, char]) => {
      const i = valid.length === 0 ? 0 : at % valid.length;
      if (how === 'insert') return valid.slice(0, i) + char + valid.slice(i);
      if (how === 'remove') return valid.slice(0, i) + valid.slice(i + 1);
      return valid.slice(0, i) + char + valid.slice(i + 1);
    });
}

/** Arbitrary text for a parameter of this schema. */
export function textFor(schema: JsonSchema | undefined): fc.Arbitrary<string> {
  const type = Array.isArray(schema?.type) ? schema?.type[0] : schema?.type;
  const options: fc.Arbitrary<string>[] = [anyText];
  if (type === 'integer' || type === 'number') options.push(anyNumberText);
  if (typeof schema?.pattern === 'string') options.push(nearMiss(schema.pattern));
  return fc.oneof(...options);
}

/** Arbitrary JSON of any type for a body field. */
export function jsonFor(schema: JsonSchema | undefined): fc.Arbitrary<unknown> {
  return fc.oneof(fc.jsonValue({ maxDepth: 3 }), textFor(schema), fc.constantFrom(...WRONG_TYPES));
}

/** JSON nested `depth` levels deep, as text (JSON.stringify would overflow the stack first). */
export function deeplyNested(depth: number, kind: 'array' | 'object' = 'array'): string {
  return kind === 'array' ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
}
