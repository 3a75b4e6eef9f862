import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';

describe('OpenAPI document and /docs', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp('sqlite');
  });
  afterAll(async () => t.close());

  it('documents every route with its responses, generated from the route schemas', async () => {
    const res = await t.app.inject('/openapi.json');
    expect(res.statusCode).toBe(200);
    const doc = res.json();
    expect(doc.openapi).toMatch(/^3\./);
    const documented = Object.keys(doc.paths);
    const served = t.app
      .printRoutes({ commonPrefix: false })
      .split('\n')
      .map((line) => line.replace(/^[\s│├└─]+/, '').split(' (')[0]!)
      .filter((path) => path.startsWith('/registry') || path.startsWith('/health'));
    expect(served.length).toBeGreaterThan(0);
    for (const path of served) expect(documented).toContain(path.replace(/:(\w+)/g, '{$1}'));
    const signing = doc.paths['/registry/signing-message'].get;
    expect(signing.security).toEqual([{ apiKey: [] }]);
    expect(signing.responses['200'].content['application/json'].schema.required).toEqual(['message', 'nonce']);
    expect(JSON.stringify(signing.responses['401'])).toContain('ErrorBody');
    expect(doc.components.schemas.ErrorBody.required).toEqual(['detail', 'code']);
  });

  it('serves the interactive documentation page', async () => {
    const res = await t.app.inject('/docs/');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/html');
  });
});
