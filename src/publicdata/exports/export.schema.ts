import { Type } from '@sinclair/typebox';
import { DateTime } from '../publicdata.schema.js';

/** The export files of the public data API (documentation; bodies are sent pre-serialized from the cache). */
export const GrantsJsonSchema = Type.Array(
  Type.Object({
    title: Type.String(),
    admin_address: Type.String(),
    token_address: Type.Union([Type.String(), Type.Null()]),
    contract_address: Type.Union([Type.String(), Type.Null()]),
    network: Type.String(),
  }),
  { title: 'GrantsExport' },
);

const ExportMetaSchema = Type.Object(
  {
    generated_at: DateTime('When the export was built'),
    count: Type.Integer(),
    round: Type.Union([Type.Integer(), Type.Null()]),
    grant: Type.Union([Type.Integer(), Type.Null()]),
    api_key: Type.Optional(
      Type.Object(
        {
          _key: Type.String(),
          _secret: Type.Union([Type.String(), Type.Null()], { description: 'Shown only in the response that created it; null afterwards.' }),
        },
        { description: 'Present on browser-session calls of grant exports: credentials for `?_key=…&_secret=…`.' },
      ),
    ),
  },
  { title: 'ExportMeta' },
);

export const AddressExportSchema = Type.Object(
  {
    meta: ExportMetaSchema,
    addresses: Type.Array(Type.String(), { description: 'Distinct lower-case addresses, sorted; opted-out users left out.' }),
  },
  { title: 'AddressExport' },
);

export const ContributorInfoExportSchema = Type.Object(
  {
    meta: ExportMetaSchema,
    contributors: Type.Array(
      Type.Object({
        handle: Type.Union([Type.String(), Type.Null()], { description: 'Null when anonymized.' }),
        picture: Type.Union([Type.String(), Type.Null()], { description: 'Avatar URL; null when anonymized.' }),
        anonymized: Type.Boolean(),
        comment: Type.String(),
      }),
      { description: 'One entry per contribution, in time order.' },
    ),
  },
  { title: 'ContributorInfoExport' },
);
