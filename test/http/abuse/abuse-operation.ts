/**
 * The abuse of one documented operation: its baseline request, then one input at a time replaced
 * by values from the tables of nasty inputs and by fast-check arbitraries, then forged credentials
 * and junk headers. AbuseRun.exercise checks every answer.
 */
import { Readable } from 'node:stream';
import fc from 'fast-check';
import { deeplyNested, jsonFor, textFor } from '../../helpers/abuse/arbitraries.js';
import { encoded, encodeLoose, type Nasty, readable } from '../../helpers/abuse/nasty-inputs.js';
import { type Operation, sampleFor } from '../../helpers/abuse/openapi.js';
import { type AbuseRun, AUTH_CODES, day, PROPERTY_OPTIONS, ROUTE_BODY_LIMITS } from './abuse-run.js';
import { baselineFor, discover, hint, type Parts, requestFrom } from './baselines.js';
import { CONTENT_TYPES, casesFor, EXTRA_QUERY, fieldCases, HEADER_JUNK, MALFORMED_JSON, WELL_FORMED_NON_OBJECTS } from './input-cases.js';

/** Operations that accept a wallet session as well as their discovered authentication: its token is no forgery there. */
const ALSO_ACCEPTS_WALLET_SESSION = new Set(['POST /v2/onchain/{chain_id}/attestations']);

export async function abuseOperation(run: AbuseRun, op: Operation): Promise<void> {
  const { auth, res: baseline } = await discover(run, op);
  if (process.env.ABUSE_STATS) console.log(`${run.kind} ${op.id}: baseline as ${auth} → ${baseline.statusCode} ${baseline.body.slice(0, 120)}`);
  const fresh = () => baselineFor(run, op, auth);
  const authRequired = auth !== 'none';
  let b = await fresh();

  // Path parameters.
  const segmentOf = (value: Nasty) => ('raw' in value ? value.raw : encodeLoose(value.text));
  for (const p of op.pathParams) {
    for (const c of casesFor(p)) {
      const segment = segmentOf(c.value);
      await run.exercise(op, await requestFrom(run, b, (parts) => void (parts.path[p.name] = segment)), { echoed: [readable(c.value)], ...c.expect });
    }
    await fc.assert(
      fc.asyncProperty(textFor(p.schema).map((text) => segmentOf({ text })), async (segment) => {
        await run.exercise(op, await requestFrom(run, b, (parts) => void (parts.path[p.name] = segment)), { echoed: [segment] });
      }),
      PROPERTY_OPTIONS,
    );
  }

  // Query parameters: each documented one, repeated, as an array, and unknown ones.
  for (const p of op.queryParams) {
    const set = (value: string) => (parts: Parts) => {
      parts.query = parts.query.filter(([k]) => k !== p.name);
      parts.query.push([p.name, value]);
    };
    for (const c of casesFor(p)) {
      await run.exercise(op, await requestFrom(run, b, set(encoded(c.value))), { echoed: [readable(c.value)], ...c.expect });
    }
    await fc.assert(
      fc.asyncProperty(textFor(p.schema), async (value) => {
        await run.exercise(op, await requestFrom(run, b, set(encodeLoose(value))), { echoed: [value] });
      }),
      PROPERTY_OPTIONS,
    );
    const valid = encodeLoose(String((await hint(run, op, p.name)) ?? sampleFor(p.schema)));
    await run.exercise(op, await requestFrom(run, b, (parts) => parts.query.push([p.name, valid], [p.name, "'%20OR%201=1"])));
    await run.exercise(op, await requestFrom(run, b, (parts) => parts.query.push([`${p.name}[]`, valid], [`${p.name}[a]`, '1'])));
    await run.exercise(op, await requestFrom(run, b, (parts) => parts.query.push([p.name, null])));
  }
  for (const extra of EXTRA_QUERY) {
    await run.exercise(op, await requestFrom(run, b, (parts) => parts.query.push([extra, null])), { echoed: [extra] });
  }

  // The body: fields, missing fields, malformed JSON, content types, sizes.
  const takesBody = ['POST', 'PUT', 'PATCH', 'DELETE'].includes(op.method);
  if (op.body) {
    const props = op.body.properties ?? {};
    for (const [name, schema] of Object.entries(props)) {
      b = await fresh();
      const setField = (value: unknown) => (parts: Parts) => void ((parts.body as Record<string, unknown>)[name] = value);
      for (const c of fieldCases(name, schema)) {
        await run.exercise(op, await requestFrom(run, b, setField(c.value)), { echoed: typeof c.value === 'string' ? [c.value] : [], ...c.expect });
      }
      await fc.assert(
        fc.asyncProperty(jsonFor(schema), async (value) => {
          await run.exercise(op, await requestFrom(run, b, setField(value)), { echoed: typeof value === 'string' ? [value] : [] });
        }),
        PROPERTY_OPTIONS,
      );
      // The same key twice, the bad value first and last; a deeply nested value.
      const good = JSON.stringify((b.body as Record<string, unknown>)[name] ?? 'x');
      const rest = JSON.stringify(b.body).slice(1, -1);
      const raws = [
        `{"${name}":"' OR 1=1 --",${rest}}`,
        `{${rest},"${name}":${good},"${name}":{"$ne":null}}`,
        `{${rest},"${name}":${deeplyNested(10_000)}}`,
        `{${rest},"${name}":${deeplyNested(10_000, 'object')}}`,
      ];
      for (const payload of raws) await run.exercise(op, await requestFrom(run, b, (parts) => void (parts.payload = payload)));
    }
    b = await fresh();
    for (const name of op.body.required ?? []) {
      await run.exercise(op, await requestFrom(run, b, (parts) => void delete (parts.body as Record<string, unknown>)[name]), { refuse: true, status: [400] });
    }
  }
  if (takesBody) {
    b = await fresh();
    const documentedBody = op.body !== null;
    const json = (change: (parts: Parts) => void) => (parts: Parts) => {
      parts.headers['content-type'] = 'application/json';
      change(parts);
    };
    for (const payload of MALFORMED_JSON) {
      await run.exercise(op, await requestFrom(run, b, json((parts) => void (parts.payload = payload))), documentedBody ? { refuse: true, status: [400] } : {});
    }
    for (const payload of WELL_FORMED_NON_OBJECTS) {
      await run.exercise(op, await requestFrom(run, b, json((parts) => void (parts.payload = payload))));
    }
    const baseJson = b.body === undefined ? '{}' : JSON.stringify(b.body);
    const inner = baseJson.startsWith('{') && baseJson.length > 2 ? `,${baseJson.slice(1, -1)}` : '';
    const polluting = [
      `{"__proto__":{"polluted":true}${inner}}`,
      `{"constructor":{"prototype":{"polluted":true}}${inner}}`,
      `{"x":${'{"__proto__":'.repeat(2000)}{}${'}'.repeat(2000)}${inner}}`,
    ];
    for (const payload of polluting) await run.exercise(op, await requestFrom(run, b, json((parts) => void (parts.payload = payload))));
    for (const depth of [10_000, 100_000]) {
      await run.exercise(op, await requestFrom(run, b, json((parts) => void (parts.payload = deeplyNested(depth)))), documentedBody ? { refuse: true } : {});
      await run.exercise(op, await requestFrom(run, b, json((parts) => void (parts.payload = `{"x":${deeplyNested(depth, 'object')}${inner}}`))));
    }
    // Empty body with a JSON content type.
    await run.exercise(op, await requestFrom(run, b, json((parts) => void (parts.payload = ''))), documentedBody ? { status: [400], code: ['invalid_json'] } : {});
    // Over the configured limit, with a length and streamed without one.
    const limit = ROUTE_BODY_LIMITS[op.id]?.(run.t.ctx.config) ?? run.t.ctx.config.bodyLimitBytes;
    const huge = `{"padding":"${'x'.repeat(limit)}"${inner}}`;
    const tooLarge = { status: [413], code: ['payload_too_large'] };
    await run.exercise(op, await requestFrom(run, b, json((parts) => void (parts.payload = huge))), tooLarge);
    await run.exercise(op, await requestFrom(run, b, json((parts) => void (parts.payload = Readable.from([Buffer.from(huge)])))), tooLarge);
    // Lying about the length.
    await run.exercise(op, await requestFrom(run, b, json((parts) => void (parts.headers['content-length'] = String(baseJson.length + 100)))));
    await run.exercise(op, await requestFrom(run, b, json((parts) => void (parts.headers['content-length'] = '-1'))));
    // Content types.
    for (const [type, expectation] of CONTENT_TYPES) {
      await run.exercise(op, await requestFrom(run, b, (parts) => {
        parts.headers['content-type'] = type;
        parts.payload = baseJson;
      }), documentedBody ? expectation : {});
    }
    await run.exercise(op, await requestFrom(run, b, (parts) => {
      delete parts.headers['content-type'];
      parts.payload = baseJson;
    }));
  }

  // Forged, malformed, revoked and replayed credentials, in every channel.
  b = await fresh();
  const forgedToken = 'A'.repeat(43);
  const secret = run.key.slice(run.keyPrefix.length + 1);
  const forgeries: Record<string, string>[] = [
    {},
    { 'x-api-key': '' },
    { 'x-api-key': 'garbage' },
    { 'x-api-key': "' OR 1=1 --" },
    { 'x-api-key': `${run.keyPrefix}.${'x'.repeat(secret.length)}` },
    { 'x-api-key': `${run.key}x` },
    { 'x-api-key': run.key.slice(0, -1) },
    { 'x-api-key': `${run.keyPrefix}.` },
    { 'x-api-key': `.${secret}` },
    { 'x-api-key': run.keyPrefix },
    { 'x-api-key': run.key.toUpperCase() },
    { 'x-api-key': run.revokedKey },
    { 'x-api-key': 'k'.repeat(8000) },
    { 'x-api-key': 'ÿþ'.repeat(10) },
    { 'x-api-key': `${run.keyPrefix}%00.${secret}` },
    { authorization: 'Bearer' },
    { authorization: 'Bearer ' },
    { authorization: 'Bearer garbage' },
    { authorization: `Bearer ${forgedToken}` },
    { authorization: `Bearer ${run.signedOutToken}` },
    { authorization: `Bearer ${run.revokedKey}` },
    { authorization: `Basic ${Buffer.from(`${run.keyPrefix}:${secret}`).toString('base64')}` },
    { authorization: `Bearer ${'t'.repeat(8000)}` },
    { authorization: `Bearer ${run.signedOutToken}x` },
    { cookie: run.sessionCookie({ handle: 'alice-dev', expiresAt: Date.now() + day }, 'w'.repeat(32)) },
    { cookie: `stampgate_session=${Buffer.from(JSON.stringify({ handle: 'alice-dev', expiresAt: Date.now() + day })).toString('base64url')}` },
    { cookie: run.sessionCookie({ handle: 'alice-dev', expiresAt: Date.now() - 1000 }) },
    { cookie: run.sessionCookie('not json') },
    { cookie: run.sessionCookie({ handle: ['alice-dev'], expiresAt: '9999999999999' }) },
    { cookie: `${run.grantsCookie}x` },
    { cookie: 'stampgate_session=' },
    { cookie: 'stampgate_session=%00' },
    { cookie: `stampgate_session=${'c'.repeat(8000)}` },
    { cookie: ';;;=;stampgate_session;=' },
    { cookie: `stampgate_portal=${'A'.repeat(43)}` },
    { cookie: 'stampgate_portal=%00', 'x-csrf-token': 'x', origin: 'http://localhost' },
    { cookie: `stampgate_portal=${'p'.repeat(8000)}` },
  ];
  if (auth !== 'apiKey') forgeries.push({ authorization: `Bearer ${run.key}` }, { 'x-api-key': run.key });
  if (auth !== 'walletSession' && !ALSO_ACCEPTS_WALLET_SESSION.has(op.id)) forgeries.push({ authorization: `Bearer ${(await run.authHeaders('walletSession')).authorization!.slice(7)}` });
  if (auth !== 'grantsSession') forgeries.push({ cookie: run.grantsCookie });
  // A route without authentication only has to survive odd credentials: every third one will do.
  for (const headers of authRequired ? forgeries : forgeries.filter((_, i) => i % 3 === 0)) {
    const request = await requestFrom(run, b, (parts) => {
      const type = parts.headers['content-type'];
      parts.headers = { ...headers, ...(type ? { 'content-type': type } : {}) };
    });
    await run.exercise(op, request, authRequired ? { refuse: true, status: [401], code: AUTH_CODES } : {});
  }

  // Odd headers with valid credentials.
  for (const headers of HEADER_JUNK) {
    await run.exercise(op, await requestFrom(run, b, (parts) => void Object.assign(parts.headers, headers)));
  }
}
