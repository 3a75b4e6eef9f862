import { AjvCompiler } from '@fastify/ajv-compiler';
import type { Options as AjvOptions, Plugin } from 'ajv';
import type { FastifySchemaCompiler, FastifyServerOptions } from 'fastify';
import { addSafeIntegerKeyword } from './schemas.js';

/** Fastify's `ajv` server option, as it hands it to the validator factory. */
interface AjvServerOption {
  customOptions?: AjvOptions;
  plugins?: (Plugin<unknown> | [Plugin<unknown>, unknown])[];
}

type RouteSchema = Parameters<FastifySchemaCompiler<unknown>>[0];
// Fastify declares the factory as returning Ajv's own `compile`; what it calls is a route compiler.
type ValidatorFactory = NonNullable<NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>['buildValidator']>;

// One pool per process, as Fastify's own: each scope with the same shared schemas and options
// reuses the Ajv instance (and its compiled schemas) of the first.
const pool = AjvCompiler();

/**
 * Fastify's own validator factory, with one Ajv for JSON bodies and another for the rest.
 * A query string, path parameter or header is text, and is parsed into its declared type
 * (`?limit=5` is the integer 5) by the configured coercion. A JSON body already carries its
 * types, and a value of another type is refused rather than converted: with coercion, a string
 * where an array is declared became a one-item array, an array of one string a string, `"5"` a
 * number, `"true"` a boolean and null an empty string. Fields that accept two types say so in
 * their schema (scorer_id, for one).
 */
function requestValidator(externalSchemas: Record<string, unknown> | undefined, options?: AjvServerOption): FastifySchemaCompiler<unknown> {
  const shared = (externalSchemas ?? {}) as Parameters<typeof pool>[0];
  const textParts = pool(shared, options) as unknown as FastifySchemaCompiler<unknown>;
  const bodies = pool(shared, { ...options, customOptions: { ...options?.customOptions, coerceTypes: false } }) as unknown as FastifySchemaCompiler<unknown>;
  return (route: RouteSchema) => (route.httpPart === 'body' ? bodies : textParts)(route);
}

export const buildRequestValidator = requestValidator as unknown as ValidatorFactory;

/** The server's `ajv` option: coercion for text parts (JSON bodies are checked without it, above). */
export const requestAjvOptions = {
  customOptions: { coerceTypes: 'array', removeAdditional: false, allErrors: false },
  plugins: [addSafeIntegerKeyword],
} satisfies AjvServerOption & FastifyServerOptions['ajv'];

/**
 * The validator compiler of a route that reads its body as a stream (a content-type parser that
 * hands the stream on): the body's schema documents it, and the handler checks it as it reads;
 * the other parts are validated as on every route.
 */
export function streamedBodyValidator(): FastifySchemaCompiler<unknown> {
  const others = requestValidator(undefined, requestAjvOptions as AjvServerOption);
  return (route: RouteSchema) => (route.httpPart === 'body' ? () => true : others(route));
}
