import { Type } from '@sinclair/typebox';
import { Address, Dict, Nullable, ProfileSchema } from '../publicdata.schema.js';

/** The grant of the public data API (documentation; bodies are sent pre-serialized from the cache). */
export const GrantSchema = Type.Object(
  {
    id: Type.Integer({ description: 'Grant id (the `pk` filter and the id in export file names).' }),
    active: Type.Boolean(),
    title: Type.String(),
    slug: Type.String(),
    description: Type.String(),
    reference_url: Type.String(),
    logo: Type.Union([Type.String(), Type.Null()]),
    admin_address: Address('Wallet of the grant admin where funds are sent'),
    amount_received: Type.String({ description: 'Total contributions received, exact decimal string.' }),
    token_address: Nullable(Address('Token used with the grant')),
    token_symbol: Type.String(),
    contract_address: Nullable(Address('Grant contract')),
    metadata: Dict('Misc metadata.'),
    network: Type.String(),
    required_gas_price: Type.String({ description: 'Exact decimal string.' }),
    grant_type: Type.String(),
    admin_profile: Type.Union([ProfileSchema, Type.Null()]),
    team_members: Type.Array(ProfileSchema),
  },
  { title: 'Grant' },
);
