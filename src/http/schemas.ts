import { Type } from '@sinclair/typebox';
import type { Ajv } from 'ajv';

/**
 * Ajv checks `minimum`/`maximum` of finite numbers only, and its query-string coercion turns
 * "1e400" or "Infinity" into Infinity, so bounds alone let those through. Integer inputs carry
 * this keyword (through `Integer` below) to refuse anything that is not a safe integer.
 */
export function addSafeIntegerKeyword(ajv: Ajv): Ajv {
  return ajv.addKeyword({
    keyword: 'x-safe-integer',
    // No `type: 'number'`: Ajv runs number keywords on finite numbers only, which is the gap.
    schemaType: 'boolean',
    errors: false,
    validate: (enabled: boolean, data: unknown) => !enabled || typeof data !== 'number' || Number.isSafeInteger(data),
  });
}

/** An integer input: a TypeBox integer that also refuses non-finite and unsafe values. */
export const Integer = (options: Parameters<typeof Type.Integer>[0] = {}) => Type.Integer({ ...options, 'x-safe-integer': true });

/** Schemas shared by several routes; the error handler maps violations of these to their own codes. */
export const AddressSchema = Type.String({
  pattern: '^0[xX][0-9a-fA-F]{40}$',
  description: 'Wallet address: 0x and 40 hexadecimal digits, any case (returned lower-case).',
  examples: ['0x85b0f0e5d5c5f0ba5b3a4e1ed6e4a1e8ff0e2c4b'],
});

export const LimitSchema = Integer({ minimum: 0, maximum: 1000, default: 100, description: 'Items per response (at most 1000).' });

export const OffsetSchema = Integer({ minimum: 0, default: 0, description: 'Items to skip.' });

export const ScorerIdSchema = Type.String({ pattern: '^[0-9]{1,15}$', description: 'Scorer identifier (a positive integer).' });

/**
 * A scorer id in a JSON body: as text or as a JSON integer, the two ways the reference service
 * takes it and real clients send it (decisions.md, "Strict bodies"). The same values either way:
 * up to 15 digits.
 */
export const BodyScorerIdSchema = Type.Union([ScorerIdSchema, Integer({ minimum: 0, maximum: 999_999_999_999_999 })], {
  description: 'Scorer identifier (a positive integer), as text or as a JSON integer.',
});
