import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import type { FastifyServerOptions } from 'fastify';

type Schema = Record<string, unknown>;

const isObject = (value: unknown): value is Schema => typeof value === 'object' && value !== null && !Array.isArray(value);
const isPrimitiveLiteral = (s: Schema) => s.const !== undefined && typeof s.type === 'string' && s.type !== 'object' && s.type !== 'array';

/**
 * A union (TypeBox's anyOf) as fast-json-stringify can write it without a validator: a member or
 * literals of one type, optionally with null, become one schema (`nullable` for the null).
 * Otherwise the serializer picks the member by running Ajv on the value, and compiles those Ajv
 * validators at the first response of each route in each process: 35-45 ms of CPU for the score
 * record on this project's 2-core machine, paid by whichever request comes first. What a value is
 * written as does not change: a member's literal only ever holds that literal, and the one member
 * left is the one the validator would pick for a non-null value. Unions of several shapes stay.
 */
function collapseUnion(union: Schema, members: Schema[]): Schema {
  const nullable = members.some((m) => m.type === 'null');
  const rest = members.filter((m) => m.type !== 'null');
  let single: Schema | null = null;
  if (rest.length > 0 && rest.every(isPrimitiveLiteral) && rest.every((m) => m.type === rest[0]!.type)) single = { type: rest[0]!.type };
  else if (rest.length === 1 && rest[0]!.anyOf === undefined && rest[0]!.$ref === undefined && !isPrimitiveLiteral(rest[0]!)) single = rest[0]!;
  if (single === null) return { ...union, anyOf: members };
  // The union's own keywords (its `default` above all) are what the serializer reads for the
  // property; a member's `default` never was.
  const { anyOf: _members, ...own } = union;
  const { default: _memberDefault, ...member } = single;
  return nullable ? { ...member, ...own, nullable: true } : { ...member, ...own };
}

/** The schema with every union that can be written without a validator collapsed (see collapseUnion); the input is not changed. */
export function serializableSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(serializableSchema);
  if (!isObject(schema)) return schema;
  const out: Schema = { ...schema };
  for (const key of ['properties', 'patternProperties'] as const) {
    if (isObject(schema[key])) out[key] = Object.fromEntries(Object.entries(schema[key]).map(([name, value]) => [name, serializableSchema(value)]));
  }
  for (const key of ['items', 'additionalProperties', 'allOf'] as const) {
    if (typeof schema[key] === 'object') out[key] = serializableSchema(schema[key]);
  }
  if (Array.isArray(schema.anyOf)) {
    const members = schema.anyOf.map(serializableSchema).filter(isObject);
    if (members.length === schema.anyOf.length) return collapseUnion(out, members);
  }
  return out;
}

type SerializerFactory = NonNullable<NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>['buildSerializer']>;

/** Fastify's own serializer factory (shared schemas, options), given each response and shared schema through serializableSchema. */
export const buildResponseSerializer: SerializerFactory = (externalSchemas, options) => {
  const shared = Object.fromEntries(Object.entries(externalSchemas ?? {}).map(([id, schema]) => [id, serializableSchema(schema)]));
  const compile = SerializerSelector()(shared, options);
  return (route) => compile({ ...route, schema: serializableSchema(route.schema) });
};
