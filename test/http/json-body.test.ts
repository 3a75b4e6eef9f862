import { describe, expect, it } from 'vitest';
import { DEPTH_SCAN_MIN_BYTES, nestingDepthExceeds } from '../../src/http/json-body.js';
import { deeplyNested } from '../helpers/abuse/arbitraries.js';
import { createTestApp } from '../helpers/app.js';
import { databaseKinds } from '../helpers/databases.js';

describe('nestingDepthExceeds', () => {
  it('counts arrays and objects, not brackets inside strings', () => {
    expect(nestingDepthExceeds('{"a":[1,{"b":2}]}', 3)).toBe(false);
    expect(nestingDepthExceeds('{"a":[1,{"b":2}]}', 2)).toBe(true);
    expect(nestingDepthExceeds(`{"a":"${'['.repeat(1000)}"}`, 2)).toBe(false);
    expect(nestingDepthExceeds(`{"a":"\\"${'{'.repeat(100)}\\\\"}`, 2)).toBe(false);
    expect(nestingDepthExceeds(`{"a\\\\":${'['.repeat(5)}${']'.repeat(5)}}`, 3)).toBe(true);
    expect(nestingDepthExceeds(deeplyNested(100_000), 64)).toBe(true);
    expect(nestingDepthExceeds(deeplyNested(64, 'object'), 64)).toBe(false);
    expect(nestingDepthExceeds(deeplyNested(65, 'object'), 64)).toBe(true);
    // Unterminated strings and stray brackets are left to JSON.parse.
    expect(nestingDepthExceeds('{"a":"[[[[', 2)).toBe(false);
    expect(nestingDepthExceeds(']]]]', 2)).toBe(false);
  });
});

describe.each(databaseKinds)('JSON bodies nested too deeply on %s', (kind) => {
  // Over the size below which bodies are not scanned.
  const padding = `"padding":"${'x'.repeat(DEPTH_SCAN_MIN_BYTES)}"`;
  const post = (payload: string) => ({ method: 'POST' as const, url: '/registry/wallet/session', headers: { 'content-type': 'application/json' }, payload });

  it('are refused with 400 before parsing; bodies within BODY_MAX_DEPTH reach validation', async () => {
    const t = await createTestApp(kind, { BODY_MAX_DEPTH: '16' });
    try {
      for (const payload of [deeplyNested(100_000), `{${padding},"message":${deeplyNested(17, 'object')}}`]) {
        const res = await t.app.inject(post(payload));
        expect(res.statusCode).toBe(400);
        expect(res.json()).toEqual({ detail: 'The request body nests arrays and objects more than 16 levels deep.', code: 'invalid_request' });
      }
      for (const payload of [`{${padding},"message":${deeplyNested(15, 'object')}}`, `{"message":${deeplyNested(1000, 'object')}}`]) {
        const res = await t.app.inject(post(payload));
        expect(res.statusCode).toBe(400);
        expect(res.json().detail).not.toContain('levels deep');
      }
      // Prototype poisoning is still refused by Fastify's parser behind the check.
      const poisoned = await t.app.inject(post(`{${padding},"__proto__":{"polluted":true},"message":"m","signature":"0x"}`));
      expect(poisoned.statusCode).toBe(400);
      expect(poisoned.json().code).toBe('invalid_json');
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    } finally {
      await t.close();
    }
  });
});
