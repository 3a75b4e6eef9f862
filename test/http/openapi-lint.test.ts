/**
 * The served OpenAPI document passes Redocly's strictest built-in ruleset (`recommended-strict`,
 * every rule an error) with no error, has a stable unique operationId on every operation and
 * names its server. The few findings that the service's contract makes unavoidable are matched by
 * what the operation is (a redirect, a refusal, an input-less read, a legacy path), not by a list of
 * paths, so a new route is held to the whole ruleset.
 */
import { createConfig, lintFromString, type NormalizedProblem } from '@redocly/openapi-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';

interface Operation {
  operationId?: string;
  parameters?: unknown[];
  requestBody?: unknown;
  responses: Record<string, unknown>;
}
interface Document {
  openapi: string;
  servers?: { url: string }[];
  paths: Record<string, Record<string, Operation>>;
}

const httpMethods = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

function operationsOf(document: Document): [string, string, Operation][] {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item).filter(([method]) => httpMethods.has(method)).map(([method, operation]) => [method, path, operation] as [string, string, Operation]),
  );
}

/** The operation a problem's JSON pointer (`#/paths/<path>/<method>/…`) is in. */
function operationAt(document: Document, pointer: string): Operation | undefined {
  const [, , path, method] = pointer.split('/').map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'));
  return path && method ? document.paths[path]?.[method] : undefined;
}

/** Why a finding is the contract rather than a defect of the document; null when it is a defect. */
function contractReason(document: Document, problem: NormalizedProblem): string | null {
  const pointer = problem.location[0]?.pointer ?? '';
  const operation = operationAt(document, pointer);
  const statuses = Object.keys(operation?.responses ?? {});
  const redirectOnly = statuses.length > 0 && statuses.some((s) => s.startsWith('3')) && !statuses.some((s) => s.startsWith('2'));
  const refusalOnly = statuses.length > 0 && statuses.every((s) => s === '405');
  switch (problem.ruleId) {
    case 'no-path-trailing-slash':
      // The public data API's paths are Django's, trailing slash included (public-data.md).
      return pointer.startsWith('#/paths/~1api~1v0.1~1') ? 'legacy public data path' : null;
    case 'operation-2xx-response':
      return redirectOnly ? 'answers by redirect' : refusalOnly ? 'GET of a POST-only path, refused with 405' : null;
    case 'operation-4xx-response':
      if (redirectOnly) return 'answers by redirect';
      return operation && !operation.parameters?.length && !operation.requestBody ? 'takes no input a client could get wrong' : null;
    default:
      return null;
  }
}

async function lint(document: Document): Promise<NormalizedProblem[]> {
  const config = await createConfig({ extends: ['recommended-strict'] });
  return lintFromString({ source: JSON.stringify(document), absoluteRef: 'openapi.json', config });
}

describe('the served OpenAPI document', () => {
  let t: TestApp;
  let document: Document;
  beforeAll(async () => {
    t = await createTestApp('sqlite');
    document = (await t.app.inject('/openapi.json')).json();
  });
  afterAll(async () => t.close());

  it('has no error under Redocly recommended-strict', async () => {
    const problems = await lint(document);
    const errors = problems.filter((p) => p.severity === 'error' && contractReason(document, p) === null);
    expect(errors.map((p) => `${p.ruleId} ${p.location[0]?.pointer}: ${p.message}`)).toEqual([]);
    // The contract's exceptions stay few: a route that is not a redirect, a refusal or input-less must pass every rule.
    expect(problems.length - errors.length).toBeLessThan(20);
    expect(document.openapi).toBe('3.1.0');
  });

  it('gives every operation a unique operationId derived from its method and path', () => {
    const operations = operationsOf(document);
    expect(operations.length).toBeGreaterThan(60);
    const ids = operations.map(([, , operation]) => operation.operationId);
    expect(ids.every((id) => typeof id === 'string' && /^[a-z][A-Za-z0-9]+$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect(document.paths['/registry/score/{scorer_id}/{address}']!.get!.operationId).toBe('getRegistryScoreByScorerIdByAddress');
    expect(document.paths['/api/v0.1/bounties/']!.get!.operationId).toBe('getApiV01BountiesSlash');
    expect(document.paths['/api/v0.1/bounties']!.get!.operationId).toBe('getApiV01Bounties');
  });

  it('names a relative server when PUBLIC_BASE_URL is unset', () => {
    expect(document.servers).toEqual([{ url: '/' }]);
  });
});

describe('the OpenAPI document of a server with PUBLIC_BASE_URL', () => {
  it('names that URL as its server, and the same operationIds', async () => {
    const t = await createTestApp('sqlite', { PUBLIC_BASE_URL: 'https://scorer.example.org' });
    try {
      const document: Document = (await t.app.inject('/openapi.json')).json();
      expect(document.servers).toEqual([{ url: 'https://scorer.example.org' }]);
      expect(document.paths['/registry/submit-passport']!.post!.operationId).toBe('postRegistrySubmitPassport');
    } finally {
      await t.close();
    }
  });
});
