/**
 * The baseline request of an operation: path and required query parameters, body, and whatever
 * authentication the route turns out to need; and that request with one input changed.
 */
import type { Readable } from 'node:stream';
import { issueCredential } from '../../../src/scoring/stamps/dev-issuer.js';
import { encodeLoose } from '../../helpers/abuse/nasty-inputs.js';
import { type OpenApiParameter, type Operation, sampleFor } from '../../helpers/abuse/openapi.js';
import type { AbuseRequest, AbuseResponse } from '../../helpers/abuse/requests.js';
import { type AbuseRun, AUTH_KINDS, type AuthKind, day } from './abuse-run.js';

/** Values for parameters and fields the seeded data gives meaning to; others come from the schema. */
export async function hint(run: AbuseRun, op: Operation, name: string): Promise<unknown> {
  switch (name) {
    case 'address':
      return run.alice.address;
    case 'scorer_id':
      return String(run.scorerId);
    case 'file':
      return op.path.includes('export_info') ? 'grant1_round1.json' : 'grant1.json';
    case 'url':
      return 'https://github.com/gitcoinco/web/issues/1/';
    case 'providers':
      return ['Google'];
    case 'credentials': {
      const address = await run.walletSessionAddress();
      return [
        issueCredential({
          privateKey: run.t.ctx.devIssuerKey!,
          address,
          provider: 'Linkedin',
          issuedAt: new Date(),
          expiresAt: new Date(Date.now() + 90 * day),
        }),
      ];
    }
    default:
      return undefined;
  }
}

/** Whole bodies that need more than field hints: a freshly signed sign-in message. */
async function bodyOverride(run: AbuseRun, op: Operation): Promise<unknown> {
  if (op.id === 'POST /registry/wallet/session') {
    const message = await run.siweMessage(run.bob);
    return { message, signature: await run.bob.account.signMessage({ message }) };
  }
  return undefined;
}

export interface Baseline {
  op: Operation;
  auth: AuthKind;
  path: Record<string, string>;
  query: [string, string][];
  body: Record<string, unknown> | unknown | undefined;
}

async function paramValue(run: AbuseRun, op: Operation, p: OpenApiParameter): Promise<string> {
  const value = (await hint(run, op, p.name)) ?? sampleFor(p.schema);
  return encodeLoose(String(value));
}

export async function baselineFor(run: AbuseRun, op: Operation, auth: AuthKind): Promise<Baseline> {
  const path: Record<string, string> = {};
  for (const p of op.pathParams) path[p.name] = await paramValue(run, op, p);
  const query: [string, string][] = [];
  for (const p of op.queryParams.filter((q) => q.required)) query.push([p.name, await paramValue(run, op, p)]);
  let body: unknown;
  if (op.body) {
    body = await bodyOverride(run, op);
    if (body === undefined) {
      const sample = sampleFor(op.body);
      if (typeof sample === 'object' && sample !== null && !Array.isArray(sample)) {
        const fields = sample as Record<string, unknown>;
        for (const name of Object.keys(op.body.properties ?? {})) {
          const hinted = await hint(run, op, name);
          if (hinted !== undefined) fields[name] = hinted;
        }
      }
      body = sample;
    }
  }
  await run.resync();
  return { op, auth, path, query, body };
}

export interface Parts {
  path: Record<string, string>;
  /** Encoded query pairs; a pair with value null is sent as a bare key. */
  query: [string, string | null][];
  body: unknown;
  /** Raw payload instead of the JSON of `body`. */
  payload?: string | Buffer | Readable;
  headers: Record<string, string>;
}

/** The baseline request with one change applied. */
export async function requestFrom(run: AbuseRun, b: Baseline, change: (parts: Parts) => void = () => {}, auth: AuthKind = b.auth): Promise<AbuseRequest> {
  const parts: Parts = {
    path: { ...b.path },
    query: b.query.map(([k, v]) => [k, v]),
    body: b.body === undefined ? undefined : structuredClone(b.body),
    headers: { ...(await run.authHeaders(auth)) },
  };
  if (b.body !== undefined) parts.headers['content-type'] = 'application/json';
  change(parts);
  const url =
    b.op.path.replace(/\{(\w+)\}/g, (_, name: string) => parts.path[name] ?? '') +
    (parts.query.length > 0 ? `?${parts.query.map(([k, v]) => (v === null ? k : `${k}=${v}`)).join('&')}` : '');
  const payload = parts.payload ?? (parts.body === undefined ? undefined : JSON.stringify(parts.body));
  return { method: b.op.method, url, headers: parts.headers, payload };
}

/** Which auth the operation needs: the first kind whose baseline is not refused with 401. */
export async function discover(run: AbuseRun, op: Operation): Promise<{ auth: AuthKind; res: AbuseResponse }> {
  const refusals: string[] = [];
  for (const auth of AUTH_KINDS) {
    const b = await baselineFor(run, op, auth);
    const res = await run.exercise(op, await requestFrom(run, b));
    if (res.statusCode !== 401) return { auth, res };
    refusals.push(`${auth}: ${res.body}`);
  }
  throw new Error(`${op.id}: the baseline request was refused with 401 by every kind of authentication:\n${refusals.join('\n')}`);
}
