import { type Static, Type } from '@sinclair/typebox';
import { AddressSchema } from '../http/schemas.js';

export const ModelScoreParams = Type.Object({ address: AddressSchema });

export const ModelScoreQuery = Type.Object({
  model: Type.String({
    minLength: 1,
    maxLength: 1000,
    description: 'One model name, or several separated by commas; each must be configured by the operator (MODELS).',
    examples: ['aggregate', 'aggregate,ethereum_activity'],
  }),
});

export const ModelAnswerSchema = Type.Object(
  {
    score: Type.Number({ minimum: 0, maximum: 100, description: 'The model\'s score, 0 to 100 (higher: more likely human).', examples: [87] }),
    num_transactions: Type.Optional(Type.Unknown({ description: 'Passed through from the model service, when it sends one.' })),
    first_funder: Type.Optional(Type.Unknown({ description: 'Passed through from the model service, when it sends one.' })),
    first_funder_amount: Type.Optional(Type.Unknown({ description: 'Passed through from the model service, when it sends one.' })),
    first_funder_timestamp: Type.Optional(Type.Unknown({ description: 'Passed through from the model service, when it sends one.' })),
  },
  {
    title: 'ModelAnswer',
    additionalProperties: true,
    description: 'One model\'s answer: `score` and every other field the model service sent, as it sent them.',
  },
);

export const ModelScoreResponseSchema = Type.Object(
  {
    address: Type.String({ description: 'The address, lower-case.', examples: ['0x85b0f0e5d5c5f0ba5b3a4e1ed6e4a1e8ff0e2c4b'] }),
    details: Type.Object({
      models: Type.Record(Type.String(), ModelAnswerSchema, {
        description: 'One entry per requested model, keyed by its name.',
        examples: [{ aggregate: { score: 87, num_transactions: 412, first_funder: '0x2a…', first_funder_amount: '1000000000000000000' } }],
      }),
    }),
  },
  { title: 'ModelScores' },
);

export type ModelScoreResponse = Static<typeof ModelScoreResponseSchema>;
