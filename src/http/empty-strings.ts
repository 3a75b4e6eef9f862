import type { FastifyInstance, FastifyRequest } from 'fastify';

interface ObjectSchema {
  properties?: Record<string, unknown>;
  required?: string[];
}

/**
 * Drops every optional top-level field whose value is the empty string, from the query and from
 * a JSON object body, before validation: to integrators `?limit=` and `"signature": ""` mean "not
 * given" (the reference service's own examples send them), so they get the default instead of a
 * 400. Required fields keep their empty value and fail validation with their own error. Driven by
 * each route's schema, so a new optional field needs nothing more.
 */
export function registerEmptyStringsAsAbsent(app: FastifyInstance): void {
  app.addHook('preValidation', async (request: FastifyRequest) => {
    const schema = request.routeOptions.schema as { querystring?: ObjectSchema; body?: ObjectSchema } | undefined;
    if (!schema) return;
    dropEmptyOptionals(request.query, schema.querystring);
    dropEmptyOptionals(request.body, schema.body);
  });
}

function dropEmptyOptionals(values: unknown, schema: ObjectSchema | undefined): void {
  if (schema?.properties === undefined || values === null || typeof values !== 'object' || Array.isArray(values)) return;
  const record = values as Record<string, unknown>;
  const required = schema.required ?? [];
  for (const key of Object.keys(record)) {
    if (record[key] === '' && Object.hasOwn(schema.properties, key) && !required.includes(key)) delete record[key];
  }
}
