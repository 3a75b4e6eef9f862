import type { LookupAddress } from 'node:dns';
import { describe, expect, it } from 'vitest';
import {
  checkWebhookTarget,
  checkWebhookUrlSyntax,
  classifyAddress,
  pinnedLookup,
  type HostResolver,
} from '../../src/webhooks/target-guard.js';
import { refusedTargets } from './refused-targets.js';

const open = { production: false, allowPrivateTargets: false };
const noDns: HostResolver = async (host) => {
  throw new Error(`DNS must not be asked for a literal (${host})`);
};

describe('checkWebhookTarget: addresses', () => {
  it.each(refusedTargets)('refuses %s as %s', async (url, kind) => {
    const result = await checkWebhookTarget(url, { ...open, resolve: noDns });
    expect(result).toMatchObject({ ok: false, refusal: { reason: 'forbidden_address', kind } });
  });

  it.each(refusedTargets)('accepts %s when private targets are allowed', async (url) => {
    const result = await checkWebhookTarget(url, { ...open, allowPrivateTargets: true, resolve: noDns });
    expect(result.ok).toBe(true);
  });

  it('accepts public literals without asking DNS and returns them as the addresses to connect to', async () => {
    expect(await checkWebhookTarget('https://93.184.215.14/hook', { ...open, resolve: noDns })).toMatchObject({
      ok: true,
      addresses: [{ address: '93.184.215.14', family: 4 }],
    });
    expect(await checkWebhookTarget('https://[2606:4700::1111]:8443/x', { ...open, resolve: noDns })).toMatchObject({
      ok: true,
      addresses: [{ address: '2606:4700::1111', family: 6 }],
    });
    expect(await checkWebhookTarget('https://[::ffff:8.8.8.8]/', { ...open, resolve: noDns })).toMatchObject({ ok: true });
  });

  it('resolves host names with the system resolver: localhost is loopback', async () => {
    const result = await checkWebhookTarget('http://localhost:9/hook', open);
    expect(result).toMatchObject({ ok: false, refusal: { reason: 'forbidden_address', host: 'localhost', kind: 'loopback' } });
  });

  it('refuses a host when any one of its addresses is not public', async () => {
    const resolve: HostResolver = async () => [
      { address: '93.184.215.14', family: 4 },
      { address: '::ffff:10.0.0.7', family: 6 },
    ];
    expect(await checkWebhookTarget('https://hooks.example.com/', { ...open, resolve })).toEqual({
      ok: false,
      refusal: { reason: 'forbidden_address', host: 'hooks.example.com', address: '::ffff:10.0.0.7', kind: 'private' },
    });
  });

  it('returns every validated address of a public host', async () => {
    const resolve: HostResolver = async () => [
      { address: '93.184.215.14', family: 4 },
      { address: '2606:2800:21f:cb07:6820:80da:af6b:8b2c', family: 6 },
    ];
    const result = await checkWebhookTarget('https://hooks.example.com/', { ...open, resolve });
    expect(result.ok && result.addresses.map((a) => a.address)).toEqual([
      '93.184.215.14',
      '2606:2800:21f:cb07:6820:80da:af6b:8b2c',
    ]);
  });

  it('refuses a host that does not resolve', async () => {
    const failing: HostResolver = async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' });
    };
    for (const resolve of [failing, async () => []]) {
      expect(await checkWebhookTarget('https://nowhere.example/', { ...open, resolve })).toEqual({
        ok: false,
        refusal: { reason: 'unresolvable_host', host: 'nowhere.example' },
      });
    }
  });
});

describe('checkWebhookUrlSyntax', () => {
  it('requires https in production only', () => {
    expect(checkWebhookUrlSyntax('http://hooks.example.com/', { production: true })).toEqual({
      ok: false,
      refusal: { reason: 'https_required' },
    });
    expect(checkWebhookUrlSyntax('https://hooks.example.com/', { production: true }).ok).toBe(true);
    expect(checkWebhookUrlSyntax('http://hooks.example.com/', { production: false }).ok).toBe(true);
  });

  it('refuses other schemes, user info, unparsable and overlong URLs', () => {
    const refusal = (url: string, maxUrlLength?: number) =>
      (checkWebhookUrlSyntax(url, { production: false, maxUrlLength }) as { refusal?: unknown }).refusal;
    expect(refusal('ftp://hooks.example.com/')).toEqual({ reason: 'unsupported_scheme', scheme: 'ftp' });
    expect(refusal('file:///etc/passwd')).toEqual({ reason: 'unsupported_scheme', scheme: 'file' });
    expect(refusal('https://user:pw@hooks.example.com/')).toEqual({ reason: 'userinfo_not_allowed' });
    expect(refusal('https://user@hooks.example.com/')).toEqual({ reason: 'userinfo_not_allowed' });
    expect(refusal('not a url')).toEqual({ reason: 'invalid_url' });
    expect(refusal('https://[::1/')).toEqual({ reason: 'invalid_url' });
    expect(refusal(`https://hooks.example.com/${'a'.repeat(2048)}`)).toEqual({ reason: 'url_too_long', maxLength: 2048 });
    expect(refusal('https://hooks.example.com/abcdef', 30)).toEqual({ reason: 'url_too_long', maxLength: 30 });
    expect(refusal('https://hooks.example.com/abc', 30)).toBeUndefined();
  });
});

describe('classifyAddress', () => {
  it('leaves public addresses alone, including neighbours of refused ranges', () => {
    for (const address of [
      '8.8.8.8',
      '1.1.1.1',
      '172.15.255.255',
      '172.32.0.1',
      '100.63.255.255',
      '100.128.0.1',
      '169.253.255.255',
      '223.255.255.255',
      '2606:4700:4700::1111',
      '::ffff:8.8.8.8',
      '2002:808:808::',
      'fbff::1',
    ]) {
      expect(classifyAddress(address), address).toBeNull();
    }
  });

  it('handles zone ids and refuses non-addresses', () => {
    expect(classifyAddress('fe80::1%eth0')).toBe('link_local');
    expect(() => classifyAddress('localhost')).toThrow(TypeError);
  });
});

describe('pinnedLookup', () => {
  const lookup = pinnedLookup([
    { address: '93.184.215.14', family: 4 },
    { address: '2606:4700::1111', family: 6 },
  ]);
  const ask = (options: Parameters<typeof lookup>[1]) =>
    new Promise<{ error: NodeJS.ErrnoException | null; address: string | LookupAddress[]; family?: number }>((resolve) =>
      lookup('any.example', options, (error, address, family) => resolve({ error, address, family })),
    );

  it('answers only with the validated addresses, whatever host is asked for', async () => {
    expect(await ask({ all: true })).toEqual({
      error: null,
      address: [
        { address: '93.184.215.14', family: 4 },
        { address: '2606:4700::1111', family: 6 },
      ],
      family: undefined,
    });
    expect(await ask({})).toEqual({ error: null, address: '93.184.215.14', family: 4 });
    expect(await ask({ family: 6 })).toEqual({ error: null, address: '2606:4700::1111', family: 6 });
    expect(await ask(4)).toEqual({ error: null, address: '93.184.215.14', family: 4 });
  });

  it('fails with ENOTFOUND for a family it has no validated address of', async () => {
    const only4 = pinnedLookup([{ address: '93.184.215.14', family: 4 }]);
    const error = await new Promise<NodeJS.ErrnoException | null>((resolve) =>
      only4('any.example', { family: 6, all: true }, (e) => resolve(e)),
    );
    expect(error?.code).toBe('ENOTFOUND');
  });
});
