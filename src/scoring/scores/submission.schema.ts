import { Type } from '@sinclair/typebox';
import { AddressSchema, ScorerIdSchema } from '../../http/schemas.js';

/** The body of POST /registry/submit-passport. */
export const SubmitPassportSchema = Type.Object(
  {
    address: AddressSchema,
    scorer_id: Type.Optional(ScorerIdSchema),
    community: Type.Optional({ ...ScorerIdSchema, description: 'Deprecated alias of scorer_id.' }),
    signature: Type.Optional(Type.String({ maxLength: 200, description: 'EIP-191 signature of the signing message by the address.' })),
    nonce: Type.Optional(Type.String({ maxLength: 200, description: 'Nonce of the signed signing message.' })),
  },
  { title: 'SubmitPassport' },
);
