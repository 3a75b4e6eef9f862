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
    // printRoutes draws a tree (4 columns a level; the root path `/` is itself a route): rebuild each full path.
    const parents: string[] = [];
    const served = t.app
      .printRoutes({ commonPrefix: false })
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => {
        const prefix = /^[\s│├└─]+/.exec(line)?.[0].length ?? 0;
        const depth = Math.max(0, prefix / 4 - 1);
        parents.length = depth;
        parents.push(line.slice(prefix).split(' (')[0]!);
        return parents.join('');
      })
      .filter((path) => path.startsWith('/registry') || path.startsWith('/health'));
    expect(served.length).toBeGreaterThan(0);
    for (const path of served) expect(documented).toContain(path.replace(/:(\w+)/g, '{$1}'));
    const signing = doc.paths['/registry/signing-message'].get;
    expect(signing.security).toEqual([{ apiKey: [] }]);
    expect(signing.responses['200'].content['application/json'].schema.required).toEqual(['message', 'nonce']);
    expect(JSON.stringify(signing.responses['401'])).toContain('ErrorBody');
    expect(doc.components.schemas.ErrorBody.required).toEqual(['detail', 'code']);
  });

  it('describes the full score record, the single read shape, per-round staking events and icons', async () => {
    const doc = (await t.app.inject('/openapi.json')).json();
    const json = (path: string, method = 'get', status = '200') => doc.paths[path][method].responses[status].content['application/json'].schema;
    const single = json('/registry/score/{scorer_id}/{address}');
    const recordFields = ['address', 'score', 'status', 'last_score_timestamp', 'expiration_date', 'evidence', 'error', 'stamp_scores'];
    expect(Object.keys(single.properties)).toEqual([...recordFields, 'items', 'count']);
    expect(single.required).toEqual(expect.arrayContaining([...recordFields, 'items', 'count']));
    expect(Object.keys(single.properties.items.items.properties)).toEqual(recordFields);
    expect(single.properties.stamp_scores.description).toMatch(/null only while PROCESSING/);
    expect(single.properties.expiration_date.description).toMatch(/earliest expirationDate/);
    for (const schema of [json('/registry/submit-passport', 'post'), json('/registry/score/{scorer_id}').properties.items.items]) {
      expect(Object.keys(schema.properties)).toEqual(recordFields);
    }

    const events = doc.paths['/registry/gtc-stake/{address}/{round_id}'].get;
    expect(events.security).toEqual([]);
    expect(events.parameters.map((p: { name: string }) => p.name).sort()).toEqual(['address', 'round_id']);
    expect(Object.keys(events.responses['200'].content['application/json'].schema.properties.results.items.properties)).toEqual([
      'id', 'event_type', 'round_id', 'staker', 'address', 'amount', 'staked', 'block_number', 'tx_hash',
    ]);
    expect(Object.keys(events.responses)).toEqual(expect.arrayContaining(['200', '400', '429']));
    expect(doc.paths['/registry/govtoken-stake/{address}/{round_id}']).toBeDefined();

    const icon = doc.paths['/static/icons/{file}'].get;
    expect(icon.security).toEqual([]);
    expect(Object.keys(icon.responses['200'].content)).toEqual(['image/svg+xml']);
    expect(json('/registry/stamp-metadata').items.properties.icon.description).toMatch(/Absolute URL/);
  });

  it('serves the interactive documentation page', async () => {
    const res = await t.app.inject('/docs/');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/html');
  });
});
