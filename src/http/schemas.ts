import { Type } from '@sinclair/typebox';

/** Schemas shared by several routes; the error handler maps violations of these to their own codes. */
export const AddressSchema = Type.String({
  pattern: '^0[xX][0-9a-fA-F]{40}$',
  description: 'Wallet address: 0x and 40 hexadecimal digits, any case (returned lower-case).',
  examples: ['0x85b0f0e5d5c5f0ba5b3a4e1ed6e4a1e8ff0e2c4b'],
});

export const LimitSchema = Type.Integer({ minimum: 0, maximum: 1000, default: 100, description: 'Items per response (at most 1000).' });

export const OffsetSchema = Type.Integer({ minimum: 0, default: 0, description: 'Items to skip.' });

export const ScorerIdSchema = Type.String({ pattern: '^[0-9]{1,15}$', description: 'Scorer identifier (a positive integer).' });
