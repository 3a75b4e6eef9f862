import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';

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
  // Attached per route, and only where a query or body has an optional field: the other routes
  // (the single-score read among them) pay nothing for it.
  app.addHook('onRoute', (route) => {
    const schema = route.schema as { querystring?: ObjectSchema; body?: ObjectSchema } | undefined;
    if (!hasOptionalFields(schema?.querystring) && !hasOptionalFields(schema?.body)) return;
    const drop = (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction) => {
      dropEmptyOptionals(request.query, schema?.querystring);
      dropEmptyOptionals(request.body, schema?.body);
      done();
    };
    const existing = route.preValidation;
    route.preValidation = existing === undefined ? [drop] : [drop, ...(Array.isArray(existing) ? existing : [existing])];
  });
}

function hasOptionalFields(schema: ObjectSchema | undefined): boolean {
  if (schema?.properties === undefined) return false;
  const required = schema.required ?? [];
  return Object.keys(schema.properties).some((key) => !required.includes(key));
}

function dropEmptyOptionals(values: unknown, schema: ObjectSchema | undefined): void {
  if (schema?.properties === undefined || values === null || typeof values !== 'object' || Array.isArray(values)) return;
  const record = values as Record<string, unknown>;
  const required = schema.required ?? [];
  for (const key of Object.keys(record)) {
    if (record[key] === '' && Object.hasOwn(schema.properties, key) && !required.includes(key)) delete record[key];
  }
}
