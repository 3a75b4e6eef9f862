/**
 * The client's types are generated from packages/client/openapi.json. This fails when the server's
 * document differs from that committed copy, so a route change cannot leave the client behind:
 * run `npm run openapi:dump` and commit the result.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { committedDocumentPath, renderOpenApiDocument } from '../../scripts/openapi-document.js';

describe('the client OpenAPI document', () => {
  it('is the server’s current document, byte for byte (else: npm run openapi:dump)', async () => {
    const rendered = await renderOpenApiDocument();
    const committed = readFileSync(committedDocumentPath, 'utf8');
    // Compare parsed first for a readable diff of what changed, then the text (formatting included).
    expect(JSON.parse(committed)).toEqual(JSON.parse(rendered));
    expect(committed).toBe(rendered);
  });

  it('documents every route the client helpers call', () => {
    const document = JSON.parse(readFileSync(committedDocumentPath, 'utf8')) as { paths: Record<string, Record<string, unknown>> };
    for (const [path, method] of [
      ['/registry/submit-passport', 'post'],
      ['/registry/score/{scorer_id}/{address}', 'get'],
      ['/registry/score/{scorer_id}', 'get'],
      ['/registry/stamps/{address}', 'get'],
      ['/api/v0.1/bounties/', 'get'],
    ] as const) {
      expect(document.paths[path]?.[method], `${method.toUpperCase()} ${path}`).toBeDefined();
    }
  });
});
