import { type Static, Type } from '@sinclair/typebox';

export const BatchIdSchema = Type.String({ pattern: '^bat_[A-Za-z0-9_-]{16}$', description: 'Batch identifier.', examples: ['bat_3hF9kQ2mZx7LwV1c'] });

export const BatchViewSchema = Type.Object(
  {
    id: BatchIdSchema,
    scorer_id: Type.Integer(),
    status: Type.Union([Type.Literal('PENDING'), Type.Literal('RUNNING'), Type.Literal('DONE'), Type.Literal('CANCELLED')]),
    total: Type.Integer({ description: 'Addresses in the batch (duplicates included: one result per submitted line).' }),
    done: Type.Integer({ description: 'Addresses scored so far.' }),
    failed: Type.Integer({ description: 'Addresses that could not be scored (their result carries `error`).' }),
    created_at: Type.String({ format: 'date-time' }),
    finished_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
  {
    title: 'Batch',
    examples: [
      { id: 'bat_3hF9kQ2mZx7LwV1c', scorer_id: 1, status: 'PENDING', total: 3, done: 0, failed: 0, created_at: '2026-11-25T14:00:00.000+00:00', finished_at: null },
    ],
  },
);

export type BatchView = Static<typeof BatchViewSchema>;

/** Addresses are checked one by one by the service, so that the first bad one is named by its index. */
export const AddressListSchema = (max: number) =>
  Type.Object(
    {
      addresses: Type.Array(Type.String({ maxLength: 64 }), {
        minItems: 1,
        maxItems: max,
        description: `1 to ${max} wallet addresses (0x and 40 hexadecimal digits, any case).`,
      }),
    },
    { additionalProperties: false, examples: [{ addresses: ['0x85b0f0e5d5c5f0ba5b3a4e1ed6e4a1e8ff0e2c4b', '0x0000000000000000000000000000000000000001'] }] },
  );

export const CsvBodySchema = Type.String({
  description: 'text/csv: one address per line, optionally a first line `address`.',
  examples: ['address\n0x85b0f0e5d5c5f0ba5b3a4e1ed6e4a1e8ff0e2c4b\n0x0000000000000000000000000000000000000001\n'],
});
