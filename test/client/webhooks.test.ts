/**
 * verifyWebhook of the client against the server's own signer (src/webhooks/signing.ts): both sides
 * use the Standard Webhooks library, so a delivery the server signs is one the client accepts, and
 * nothing else is.
 */
import { verifyWebhook, WebhookVerificationError, StampgateError } from '@stampgate/client';
import { describe, expect, it } from 'vitest';
import { generateWebhookSecret, signWebhook } from '../../src/webhooks/signing.js';

const body = JSON.stringify({ event_id: '42', scorer_id: 7, address: '0x85b0f0e5d5c5f0ba5b3a4e1ed6e4a1e8ff0e2c4b', score: '21.75400' });

function refusal(run: () => unknown): WebhookVerificationError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(WebhookVerificationError);
    expect(error).toBeInstanceOf(StampgateError);
    return error as WebhookVerificationError;
  }
  throw new Error('verifyWebhook accepted the delivery');
}

describe('verifyWebhook', () => {
  const secret = generateWebhookSecret();

  it('accepts a delivery signed by the server, from a plain header record, a fetch Headers or the raw bytes', () => {
    const headers = signWebhook({ secret, id: '42', body, timestamp: new Date() });
    const verified = verifyWebhook<{ score: string }>({ secret, body, headers });
    expect(verified.id).toBe('42');
    expect(verified.payload.score).toBe('21.75400');
    expect(Math.abs(verified.timestamp.getTime() - Date.now())).toBeLessThan(5_000);

    const upperCase = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toUpperCase(), value]));
    expect(verifyWebhook({ secret, body: new TextEncoder().encode(body), headers: upperCase }).id).toBe('42');
    expect(verifyWebhook({ secret, body, headers: new Headers(headers) }).id).toBe('42');
  });

  it('accepts either secret during a rotation', () => {
    const next = generateWebhookSecret();
    const headers = signWebhook({ secret: next, id: '43', body, timestamp: new Date() });
    expect(verifyWebhook({ secret: [secret, next], body, headers }).id).toBe('43');
    expect(refusal(() => verifyWebhook({ secret, body, headers })).code).toBe('invalid_signature');
  });

  it('refuses a changed body, another id, a missing header, an old timestamp and a non-UTF-8 body', () => {
    const headers = signWebhook({ secret, id: '44', body, timestamp: new Date() });
    expect(refusal(() => verifyWebhook({ secret, body: body.replace('21.75400', '99.00000'), headers })).code).toBe('invalid_signature');
    expect(refusal(() => verifyWebhook({ secret, body, headers: { ...headers, 'webhook-id': '45' } })).code).toBe('invalid_signature');
    const { 'webhook-signature': _dropped, ...unsigned } = headers;
    expect(refusal(() => verifyWebhook({ secret, body, headers: unsigned })).code).toBe('missing_headers');
    const old = signWebhook({ secret, id: '46', body, timestamp: new Date(Date.now() - 10 * 60_000) });
    expect(refusal(() => verifyWebhook({ secret, body, headers: old })).code).toBe('stale_timestamp');
    const bytes = new Uint8Array([0xff, 0xfe, 0x7b]);
    expect(refusal(() => verifyWebhook({ secret, body: bytes, headers })).code).toBe('invalid_body');
    expect(refusal(() => verifyWebhook({ secret, body, headers: { ...headers, 'webhook-signature': ['v1,a', 'v1,b'] } })).code).toBe(
      'missing_headers',
    );
  });

  it('a malformed secret is a configuration error (TypeError), not a refused delivery', () => {
    const headers = signWebhook({ secret, id: '47', body, timestamp: new Date() });
    expect(() => verifyWebhook({ secret: 'whsec_***', body, headers })).toThrow(TypeError);
  });
});
