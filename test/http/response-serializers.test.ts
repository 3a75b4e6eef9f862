import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import { Type } from '@sinclair/typebox';
import { describe, expect, it, vi } from 'vitest';
import { StampPage } from '../../src/scoring/stamps/routes/stamps.js';
import { ScoreRecordSchema } from '../../src/scoring/scores/score-record.schema.js';
import { DeliveryLogSchema } from '../../src/webhooks/webhooks.schema.js';
import { createTestApp } from '../helpers/app.js';
import { databaseKinds } from '../helpers/databases.js';

// Every response schema the service's routes hand to the serializer factory, as it collapses them.
const compiled = vi.hoisted(() => [] as { route: string; schema: unknown }[]);
vi.mock('../../src/http/response-serializers.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/http/response-serializers.js')>();
  const recording: typeof real.buildResponseSerializer = (externalSchemas, options) => {
    const compile = real.buildResponseSerializer(externalSchemas, options);
    return (route) => {
      compiled.push({ route: `${route.method} ${route.url} ${route.httpStatus}`, schema: real.serializableSchema(route.schema) });
      return compile(route);
    };
  };
  return { ...real, buildResponseSerializer: recording };
});
const { serializableSchema, buildResponseSerializer } = await import('../../src/http/response-serializers.js');

/** Where a schema still makes fast-json-stringify run Ajv on the value to write it. */
function validatorKeywords(schema: unknown, path = ''): string[] {
  if (typeof schema !== 'object' || schema === null) return [];
  const here = ['anyOf', 'oneOf', 'if'].filter((k) => k in schema).map((k) => `${path || '/'} ${k}`);
  return [...here, ...Object.entries(schema).flatMap(([k, v]) => validatorKeywords(v, `${path}/${k}`))];
}

const fastifyDefault = SerializerSelector()({}, {});
const ours = buildResponseSerializer({}, {});
const write = (build: typeof ours, schema: unknown, value: unknown) => build({ schema, method: 'GET', url: '/x', httpStatus: '200' })(value);

const scoreRecords = [
  {
    address: '0x8896f2a14f223bd0017edc81b90f267551b530c0',
    score: '1.00000',
    status: 'DONE',
    last_score_timestamp: '2026-12-01T12:00:00.123456+00:00',
    expiration_date: '2027-03-01T12:00:00+00:00',
    evidence: { type: 'ThresholdScoreCheck', success: true, rawScore: '22.5', threshold: '20.00000' },
    error: null,
    stamp_scores: { Google: '2.25000', 'Discord#x': '0.51600' },
  },
  { address: '0xab', score: null, status: 'PROCESSING', last_score_timestamp: 't', expiration_date: null, evidence: null, error: null, stamp_scores: null },
  { address: '0xab', score: null, status: 'ERROR', last_score_timestamp: 't', expiration_date: null, evidence: null, error: 'upstream "down"\n', stamp_scores: {} },
];

describe('response schemas written without a validator', () => {
  it.each(databaseKinds)('hold no union the serializer must test the value against, in any route of the service (%s)', async (kind) => {
    compiled.length = 0;
    const t = await createTestApp(kind);
    await t.close();
    // The service has hundreds of (route, status) schemas: the recording above was reached.
    expect(compiled.length).toBeGreaterThan(200);
    expect(compiled.flatMap((c) => validatorKeywords(c.schema).map((where) => `${c.route}: ${where}`))).toEqual([]);
  });

  it('write the same bytes as Fastify’s own serializer for the score record, stamp pages and delivery logs', () => {
    for (const record of scoreRecords) {
      expect(write(ours, ScoreRecordSchema, record)).toBe(write(fastifyDefault, ScoreRecordSchema, record));
      expect(JSON.parse(write(ours, ScoreRecordSchema, record))).toEqual(record);
    }
    const page = {
      next: null,
      prev: '/registry/v2/stamps/0xab?token=a',
      items: [
        { version: '1.0.0', credential: { a: [1, { b: null }] } },
        { version: '1.0.0', credential: {}, metadata: null },
        { version: '1.0.0', credential: {}, metadata: { name: 'Google', description: 'd', hash: 'h', group: 'g', platform: { id: 'Google', name: 'Google', icon: 'https://x/y.svg', description: 'd', connectMessage: 'c' } } },
      ],
    };
    expect(write(ours, StampPage, page)).toBe(write(fastifyDefault, StampPage, page));
    const log = {
      items: [
        { delivery_id: 1, event_id: '2', delivery_state: 'failed', attempt: 1, status_code: null, duration_ms: 12, error: 'timeout', created_at: '2026-12-01T11:00:00.000Z', next_attempt_at: '2026-12-01T12:00:00.000Z' },
        { delivery_id: 3, event_id: '2', delivery_state: 'delivered', attempt: 2, status_code: 204, duration_ms: 3, error: null, created_at: '2026-12-01T11:00:00.000Z', next_attempt_at: null },
      ],
      next: null,
    };
    expect(write(ours, DeliveryLogSchema, log)).toBe(write(fastifyDefault, DeliveryLogSchema, log));
  });

  it('collapse a member with null, literals of one type and nested unions; keep unions of several shapes; leave the input as it was', () => {
    const input = Type.Object({
      name: Type.Union([Type.String({ maxLength: 3 }), Type.Null()]),
      status: Type.Union([Type.Literal('A'), Type.Literal('B')]),
      maybe: Type.Union([Type.Literal(1), Type.Literal(2), Type.Null()]),
      list: Type.Array(Type.Union([Type.Object({ x: Type.Union([Type.Integer(), Type.Null()]) }), Type.Null()])),
      either: Type.Union([Type.Object({ a: Type.String() }), Type.Object({ b: Type.String() })]),
      mixed: Type.Union([Type.Literal('a'), Type.Literal(1)]),
    });
    const before = JSON.stringify(input);
    const out = serializableSchema(input) as { properties: Record<string, Record<string, unknown>> };
    expect(JSON.stringify(input)).toBe(before);
    const p = out.properties;
    expect(p.name).toMatchObject({ type: 'string', nullable: true });
    expect(p.status).toMatchObject({ type: 'string' });
    expect(p.maybe).toMatchObject({ type: 'number', nullable: true });
    for (const literals of [p.status, p.maybe]) expect(literals).not.toHaveProperty('const');
    expect(p.list).toMatchObject({ type: 'array', items: { type: 'object', nullable: true, properties: { x: { type: 'integer', nullable: true } } } });
    expect(validatorKeywords(p.either)).toEqual(['/ anyOf']);
    expect(validatorKeywords(p.mixed)).toEqual(['/ anyOf']);
    const value = { name: null, status: 'B', maybe: 2, list: [null, { x: null }, { x: 3 }], either: { b: 'y' }, mixed: 1 };
    expect(write(ours, input, value)).toBe(write(fastifyDefault, input, value));
    expect(JSON.parse(write(ours, input, value))).toEqual(value);
  });

  it('keep the union’s default and ignore a member’s, as Fastify’s serializer does', () => {
    const schema = Type.Object({
      unionDefault: Type.Optional(Type.Union([Type.String(), Type.Null()], { default: 'd' })),
      memberDefault: Type.Optional(Type.Union([Type.String({ default: 'm' }), Type.Null()])),
    });
    expect(write(ours, schema, {})).toBe(write(fastifyDefault, schema, {}));
    expect(write(ours, schema, {})).toBe('{"unionDefault":"d"}');
  });

  it('collapse the unions of shared schemas ($ref) too', () => {
    const shared = { $id: 'Shared', type: 'object', properties: { note: Type.Union([Type.String(), Type.Null()]) } };
    const build = buildResponseSerializer({ Shared: shared }, {});
    const serialize = build({ schema: { type: 'object', properties: { item: { $ref: 'Shared#' } } }, method: 'GET', url: '/x', httpStatus: '200' });
    expect(serialize({ item: { note: null } })).toBe('{"item":{"note":null}}');
    expect(serialize({ item: { note: 'a' } })).toBe('{"item":{"note":"a"}}');
    expect(validatorKeywords(serializableSchema(shared))).toEqual([]);
    expect(validatorKeywords(shared)).toEqual(['/properties/note anyOf']);
  });
});
