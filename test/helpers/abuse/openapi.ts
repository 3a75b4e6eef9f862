/**
 * The operations of the app's own OpenAPI document (so the abuse tests cover every documented
 * operation, including ones added later), the routes the app really serves, and a schema-valid
 * value for any parameter or field the tests know nothing special about.
 */
import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';

export type JsonSchema = {
  type?: string | string[];
  $ref?: string;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  default?: unknown;
  example?: unknown;
  examples?: unknown[];
  enum?: unknown[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  [key: string]: unknown;
};

export interface OpenApiParameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  schema?: JsonSchema;
}

interface OpenApiOperation {
  parameters?: OpenApiParameter[];
  requestBody?: { required?: boolean; content?: Record<string, { schema?: JsonSchema }> };
  responses?: Record<string, unknown>;
}

export interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, OpenApiOperation>>;
  components?: { schemas?: Record<string, JsonSchema> };
}

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
export const HTTP_METHODS: HttpMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

export interface Operation {
  /** `GET /registry/score/{scorer_id}` */
  id: string;
  method: HttpMethod;
  /** The OpenAPI path template. */
  path: string;
  pathParams: OpenApiParameter[];
  queryParams: OpenApiParameter[];
  /** The JSON body schema (references resolved), or null when the operation documents none. */
  body: JsonSchema | null;
  /** Documented response statuses. */
  statuses: number[];
}

/** Follows `$ref`s into `components.schemas`, recursively. */
export function resolveSchema(doc: OpenApiDocument, schema: JsonSchema | undefined, depth = 0): JsonSchema | undefined {
  if (!schema || depth > 20) return schema;
  if (typeof schema.$ref === 'string') {
    const name = schema.$ref.replace(/^#\/components\/schemas\//, '');
    return resolveSchema(doc, doc.components?.schemas?.[name], depth + 1);
  }
  const out: JsonSchema = { ...schema };
  if (schema.properties) {
    out.properties = Object.fromEntries(Object.entries(schema.properties).map(([k, v]) => [k, resolveSchema(doc, v, depth + 1) ?? {}]));
  }
  if (schema.items) out.items = resolveSchema(doc, schema.items, depth + 1);
  return out;
}

/** Every operation the document lists (HEAD and OPTIONS left out: they carry no input of their own). */
export function listOperations(doc: OpenApiDocument): Operation[] {
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const [lower, operation] of Object.entries(item)) {
      const method = lower.toUpperCase() as HttpMethod;
      if (!HTTP_METHODS.includes(method)) continue;
      const parameters = (operation.parameters ?? []).map((p) => ({ ...p, schema: resolveSchema(doc, p.schema) }));
      const content = operation.requestBody?.content ?? {};
      const jsonBody = content['application/json']?.schema ?? Object.values(content)[0]?.schema;
      operations.push({
        id: `${method} ${path}`,
        method,
        path,
        pathParams: parameters.filter((p) => p.in === 'path'),
        queryParams: parameters.filter((p) => p.in === 'query'),
        body: jsonBody ? (resolveSchema(doc, jsonBody) ?? null) : null,
        statuses: Object.keys(operation.responses ?? {})
          .map(Number)
          .filter((n) => Number.isInteger(n)),
      });
    }
  }
  return operations;
}

/**
 * The routes the server really serves (from `printRoutes`), as OpenAPI templates with their methods.
 * Routes whose parameters at one position have different names share a router node printed as
 * `:scorer_id|:address`; `paths` lists every reading of such a path (`path` is the first).
 */
export function servedRoutes(app: FastifyInstance): { path: string; paths: string[]; methods: string[] }[] {
  const out: { path: string; paths: string[]; methods: string[] }[] = [];
  const stack: { depth: number; prefix: string }[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const match = /^([\s│├└─]*)(.*?)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!match || !match[2]) continue;
    const depth = match[1]!.length;
    while (stack.length > 0 && stack[stack.length - 1]!.depth >= depth) stack.pop();
    const parent = stack.length > 0 ? stack[stack.length - 1]!.prefix : '';
    const prefix = parent + match[2];
    stack.push({ depth, prefix });
    if (match[3]) {
      const paths = parameterReadings(prefix).map((path) => path.replace(/:(\w+)/g, '{$1}'));
      out.push({ path: paths[0]!, paths, methods: match[3].split(',').map((m) => m.trim()) });
    }
  }
  return out;
}

/** `/a/:x|:y/b` → [`/a/:x/b`, `/a/:y/b`] (every combination when several segments alternate). */
function parameterReadings(path: string): string[] {
  const match = /:\w+(?:\|:\w+)+/.exec(path);
  if (!match) return [path];
  const head = path.slice(0, match.index);
  const tails = parameterReadings(path.slice(match.index + match[0].length));
  return match[0].split('|').flatMap((name) => tails.map((tail) => head + name + tail));
}

/** A value the schema accepts, for parameters and fields the test knows nothing special about. */
export function sampleFor(schema: JsonSchema | undefined): unknown {
  if (!schema) return 'x';
  if (schema.example !== undefined) return schema.example;
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if (schema.default !== undefined) return schema.default;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  const variants = schema.anyOf ?? schema.oneOf;
  if (variants && variants.length > 0) return sampleFor(variants[0]);
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'integer':
    case 'number':
      return typeof schema.minimum === 'number' ? Math.max(schema.minimum, 1) : 1;
    case 'boolean':
      return true;
    case 'null':
      return null;
    case 'array':
      return Array.from({ length: schema.minItems ?? 0 }, () => sampleFor(schema.items));
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const name of schema.required ?? []) out[name] = sampleFor(schema.properties?.[name]);
      return out;
    }
    default: {
      if (typeof schema.pattern === 'string') {
        return fc.sample(fc.stringMatching(new RegExp(schema.pattern)), { numRuns: 1, seed: 42 })[0];
      }
      return 'x'.repeat(Math.max(1, schema.minLength ?? 1));
    }
  }
}
