import { createHmac } from 'node:crypto';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import {
  generateWebhookSecret,
  isWebhookSecret,
  signWebhook,
  verifyWebhook,
  type WebhookSignatureHeaders,
} from '../../src/webhooks/signing.js';

const body = JSON.stringify({ event_id: 42, scorer_id: 7, score: '21.75400', passing_score: true });

function signedNow(secret: string, id = '42', at = new Date()): WebhookSignatureHeaders {
  return signWebhook({ secret, id, body, timestamp: at });
}

describe('webhook secrets', () => {
  it('are whsec_ plus base64 of 32 random bytes, different every time', () => {
    const a = generateWebhookSecret();
    const b = generateWebhookSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(a.slice(6), 'base64')).toHaveLength(32);
    expect(a).not.toBe(b);
    expect(isWebhookSecret(a)).toBe(true);
  });

  it('refuses secrets without the prefix, of the wrong size or not base64', () => {
    const key = (bytes: number): string => Buffer.alloc(bytes, 1).toString('base64');
    expect(isWebhookSecret(key(32))).toBe(false);
    expect(isWebhookSecret(`whsec_${key(23)}`)).toBe(false);
    expect(isWebhookSecret(`whsec_${key(24)}`)).toBe(true);
    expect(isWebhookSecret(`whsec_${key(64)}`)).toBe(true);
    expect(isWebhookSecret(`whsec_${key(65)}`)).toBe(false);
    expect(isWebhookSecret('whsec_')).toBe(false);
    expect(isWebhookSecret(`whsec_${key(32).replace(/.$/, '!')}`)).toBe(false);
    expect(() => signWebhook({ secret: key(32), id: '1', body, timestamp: new Date() })).toThrow(TypeError);
  });
});

describe('signWebhook', () => {
  it('produces headers the independent standardwebhooks verifier accepts', () => {
    const secret = generateWebhookSecret();
    const headers = signedNow(secret);
    expect(headers['webhook-id']).toBe('42');
    expect(headers['webhook-timestamp']).toMatch(/^\d{10}$/);
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(new Webhook(secret).verify(body, { ...headers })).toEqual(JSON.parse(body));
  });

  it('is the HMAC-SHA256 of "<id>.<timestamp>.<body>" under the decoded secret (checked with node:crypto)', () => {
    const secret = generateWebhookSecret();
    const at = new Date('2026-11-25T12:00:00.789Z');
    const headers = signWebhook({ secret, id: 'evt_9', body, timestamp: at });
    expect(headers['webhook-timestamp']).toBe(String(Math.floor(at.getTime() / 1000)));
    const expected = createHmac('sha256', Buffer.from(secret.slice('whsec_'.length), 'base64'))
      .update(`evt_9.${headers['webhook-timestamp']}.${body}`)
      .digest('base64');
    expect(headers['webhook-signature']).toBe(`v1,${expected}`);
  });

  it('refuses ids that would break the signed string or the header', () => {
    const secret = generateWebhookSecret();
    for (const id of ['', 'a b', 'a,b', 'a.b']) {
      expect(() => signWebhook({ secret, id, body, timestamp: new Date() })).toThrow(TypeError);
    }
  });
});

describe('verifyWebhook', () => {
  const secret = generateWebhookSecret();

  it('accepts a genuine delivery and returns the parsed payload, id and timestamp', () => {
    const headers = signedNow(secret);
    const result = verifyWebhook({ secret, body, headers });
    expect(result).toEqual({
      valid: true,
      id: '42',
      timestamp: new Date(Number(headers['webhook-timestamp']) * 1000),
      payload: JSON.parse(body),
    });
    expect(verifyWebhook({ secret, body: Buffer.from(body), headers }).valid).toBe(true);
  });

  it('reads node:http style headers (any case) and fetch Headers', () => {
    const headers = signedNow(secret);
    const upper = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toUpperCase(), v]));
    expect(verifyWebhook({ secret, body, headers: upper }).valid).toBe(true);
    expect(verifyWebhook({ secret, body, headers: new Headers({ ...headers }) }).valid).toBe(true);
  });

  it('rejects a tampered body, timestamp or id, as the library verifier does', () => {
    const headers = signedNow(secret);
    const tampered: Array<[string, WebhookSignatureHeaders]> = [
      [body.replace('21.75400', '99.00000'), headers],
      [body, { ...headers, 'webhook-timestamp': String(Number(headers['webhook-timestamp']) - 1) }],
      [body, { ...headers, 'webhook-id': '43' }],
    ];
    for (const [changedBody, changedHeaders] of tampered) {
      expect(verifyWebhook({ secret, body: changedBody, headers: changedHeaders })).toEqual({
        valid: false,
        reason: 'invalid_signature',
      });
      expect(() => new Webhook(secret).verify(changedBody, { ...changedHeaders })).toThrow(WebhookVerificationError);
    }
  });

  it('rejects a delivery signed with a secret that was rotated away, and accepts both during a grace period', () => {
    const oldSecret = generateWebhookSecret();
    const newSecret = generateWebhookSecret();
    const headers = signedNow(newSecret);
    expect(verifyWebhook({ secret: oldSecret, body, headers })).toEqual({ valid: false, reason: 'invalid_signature' });
    expect(() => new Webhook(oldSecret).verify(body, { ...headers })).toThrow(WebhookVerificationError);
    expect(verifyWebhook({ secret: newSecret, body, headers }).valid).toBe(true);
    expect(verifyWebhook({ secret: [oldSecret, newSecret], body, headers }).valid).toBe(true);
    expect(verifyWebhook({ secret: oldSecret, body, headers: signedNow(oldSecret) }).valid).toBe(true);
  });

  it('rejects a replay outside the five-minute window and missing or malformed headers', () => {
    const stale = signedNow(secret, '42', new Date(Date.now() - 10 * 60_000));
    expect(verifyWebhook({ secret, body, headers: stale })).toEqual({ valid: false, reason: 'stale_timestamp' });
    const headers = signedNow(secret);
    const { 'webhook-signature': _dropped, ...unsigned } = headers;
    expect(verifyWebhook({ secret, body, headers: unsigned })).toEqual({ valid: false, reason: 'missing_headers' });
    expect(verifyWebhook({ secret, body, headers: { ...headers, 'webhook-timestamp': `${headers['webhook-timestamp']}x` } }))
      .toEqual({ valid: false, reason: 'invalid_signature' });
    const repeated = { ...headers, 'webhook-signature': [headers['webhook-signature'], headers['webhook-signature']] };
    expect(verifyWebhook({ secret, body, headers: repeated })).toEqual({ valid: false, reason: 'missing_headers' });
  });

  it('reports a correctly signed body that is not JSON as invalid_body', () => {
    const headers = signWebhook({ secret, id: '1', body: 'not json', timestamp: new Date() });
    expect(verifyWebhook({ secret, body: 'not json', headers })).toEqual({ valid: false, reason: 'invalid_body' });
  });
});
