import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
/** eas-sdk, the independent implementation (loaded as CommonJS: its ESM build imports paths Node does not resolve). */
export const easSdk = require('@ethereum-attestation-service/eas-sdk') as typeof import('@ethereum-attestation-service/eas-sdk');

type Item = { name: string; value: unknown };

function plain(value: unknown): unknown {
  if (Array.isArray(value)) {
    // A tuple decodes as a list of named items; an array as a list of values.
    if (value.every((v) => typeof v === 'object' && v !== null && 'name' in v && 'value' in v && !Array.isArray(v))) {
      return Object.fromEntries((value as Item[]).map((item) => [item.name, plain(item.value)]));
    }
    return value.map(plain);
  }
  return typeof value === 'bigint' ? value.toString() : value;
}

/** Schema data decoded by eas-sdk's SchemaEncoder, as plain JSON values (integers as decimal text). */
export function decodeSchemaData(schema: string, data: string): Record<string, unknown> {
  return Object.fromEntries(new easSdk.SchemaEncoder(schema).decodeData(data).map((item) => [item.name, plain(item.value.value)]));
}
