import { Type } from '@sinclair/typebox';
import { SIGNATURE_MAX_LENGTH } from '../../chain/wallet-ownership.js';
import { AddressSchema, BodyScorerIdSchema } from '../../http/schemas.js';

/** The body of POST /registry/submit-passport. */
export const SubmitPassportSchema = Type.Object(
  {
    address: AddressSchema,
    scorer_id: Type.Optional(BodyScorerIdSchema),
    community: Type.Optional({ ...BodyScorerIdSchema, description: 'Deprecated alias of scorer_id, as text or as a JSON integer.' }),
    signature: Type.Optional(
      Type.String({
        maxLength: SIGNATURE_MAX_LENGTH,
        description:
          'EIP-191 (personal_sign) signature of the signing message by the address, 0x-hex: an EOA signature, or a contract ' +
          'wallet\'s (ERC-1271 deployed, ERC-6492 not yet deployed) when SMART_WALLET_RPC_URL is configured.',
      }),
    ),
    nonce: Type.Optional(Type.String({ maxLength: 200, description: 'Nonce of the signed signing message.' })),
  },
  { title: 'SubmitPassport' },
);
