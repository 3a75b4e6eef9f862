/** Reading EIP-4361 (sign-in with Ethereum) messages strictly: what viem writes, and nothing around or beside it. */
import { createSiweMessage } from 'viem/siwe';
import { describe, expect, it } from 'vitest';
import { parseSiweMessageStrict } from '../../src/sessions/siwe.js';

describe('EIP-4361 message reading', () => {
  const base = {
    address: '0xA0Cf798816D4b9b9866b5330EEa46a18382f251e' as const,
    chainId: 10,
    domain: 'stampgate.example',
    nonce: 'abcdef0123456789',
    uri: 'https://stampgate.example/login',
    version: '1' as const,
    issuedAt: new Date('2026-11-21T10:00:00.000Z'),
    expirationTime: new Date('2026-11-21T10:10:00.000Z'),
  };

  it('reads what viem writes, with and without the optional fields', () => {
    const full = createSiweMessage({
      ...base,
      scheme: 'https',
      statement: 'Sign in please.',
      notBefore: new Date('2026-11-21T10:01:00.000Z'),
      requestId: 'req-1',
      resources: ['https://a.example/1', 'ipfs://b'],
    });
    expect(parseSiweMessageStrict(full)).toEqual({
      ...base,
      scheme: 'https',
      statement: 'Sign in please.',
      notBefore: new Date('2026-11-21T10:01:00.000Z'),
      requestId: 'req-1',
      resources: ['https://a.example/1', 'ipfs://b'],
    });
    const bare = createSiweMessage({ ...base, expirationTime: undefined });
    expect(parseSiweMessageStrict(bare)).toEqual({ ...base, expirationTime: undefined, issuedAt: base.issuedAt });
    expect(parseSiweMessageStrict(bare).expirationTime).toBeUndefined();
  });

  it('reads a message without statement in the grammar’s form and in the older two-line-feed form', () => {
    const grammarForm = createSiweMessage(base);
    expect(grammarForm).toContain(`${base.address}\n\n\nURI: `);
    const olderForm = grammarForm.replace(`${base.address}\n\n\n`, `${base.address}\n\n`);
    expect(parseSiweMessageStrict(olderForm)).toEqual(parseSiweMessageStrict(grammarForm));
    // A fourth line feed is not either form.
    expect(() => parseSiweMessageStrict(grammarForm.replace('\n\n\n', '\n\n\n\n'))).toThrow(/does not follow/);
  });

  it('refuses text around the message, other line endings, and malformed fields', () => {
    const good = createSiweMessage(base);
    const refused = (message: string, detail: RegExp) =>
      expect(() => parseSiweMessageStrict(message)).toThrow(expect.objectContaining({ code: 'invalid_siwe_message', message: expect.stringMatching(detail) }));
    refused('hello', /not a Sign-In with Ethereum/);
    refused(`${good}\nExtra: line`, /does not follow the EIP-4361 format/);
    refused(`Please sign\n${good}`, /does not follow/);
    refused(good.replaceAll('\n', '\r\n'), /does not follow/);
    refused(good.replace('Chain ID: 10', 'Chain ID: ten'), /Chain ID/);
    refused(good.replace('Version: 1', 'Version: 2'), /Version must be 1/);
    refused(good.replace(base.address, base.address.replace('A0Cf', 'a0CF')), /checksum/);
    refused(good.replace(base.address, '0x1234'), /address is not 0x/);
    refused(good.replace('Nonce: abcdef0123456789', 'Nonce: abc'), /Nonce/);
    refused(good.replace('2026-11-21T10:10:00.000Z', 'tomorrow'), /Expiration Time.*RFC 3339/);
    // An all-lower-case address is fine.
    expect(parseSiweMessageStrict(good.replace(base.address, base.address.toLowerCase())).address).toBe(base.address.toLowerCase());
  });
});
