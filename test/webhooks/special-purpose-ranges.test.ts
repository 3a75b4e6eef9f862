import { describe, expect, it } from 'vitest';
import { checkWebhookTarget, classifyAddress, type HostResolver } from '../../src/webhooks/target-guard.js';

const open = { production: false, allowPrivateTargets: false };
const noDns: HostResolver = async (host) => {
  throw new Error(`DNS must not be asked for a literal (${host})`);
};

/**
 * One address of every range of the IANA IPv4 and IPv6 Special-Purpose Address Registries whose
 * "Globally Reachable" is False or N/A (multicast besides): a webhook must never be sent there.
 */
const specialPurpose: ReadonlyArray<[range: string, address: string]> = [
  ['0.0.0.0/8 this network', '0.1.2.3'],
  ['0.0.0.0/32 this host', '0.0.0.0'],
  ['10.0.0.0/8 private', '10.20.30.40'],
  ['100.64.0.0/10 shared address space', '100.100.1.1'],
  ['127.0.0.0/8 loopback', '127.8.9.10'],
  ['169.254.0.0/16 link local', '169.254.1.2'],
  ['172.16.0.0/12 private', '172.20.0.1'],
  ['192.0.0.0/24 IETF protocol assignments', '192.0.0.100'],
  ['192.0.0.0/29 DS-Lite', '192.0.0.1'],
  ['192.0.0.8/32 IPv4 dummy address', '192.0.0.8'],
  ['192.0.0.170/32 NAT64/DNS64 discovery', '192.0.0.170'],
  ['192.0.2.0/24 documentation', '192.0.2.7'],
  ['192.88.99.0/24 6to4 relay anycast', '192.88.99.1'],
  ['192.168.0.0/16 private', '192.168.44.1'],
  ['198.18.0.0/15 benchmarking', '198.19.255.1'],
  ['198.51.100.0/24 documentation', '198.51.100.9'],
  ['203.0.113.0/24 documentation', '203.0.113.200'],
  ['224.0.0.0/4 multicast', '233.1.2.3'],
  ['240.0.0.0/4 reserved', '250.1.2.3'],
  ['255.255.255.255/32 limited broadcast', '255.255.255.255'],
  ['::1/128 loopback', '::1'],
  ['::/128 unspecified', '::'],
  ['::ffff:0:0/96 IPv4-mapped', '::ffff:10.0.0.1'],
  ['64:ff9b::/96 NAT64 of a private address', '64:ff9b::c0a8:101'],
  ['64:ff9b:1::/48 local-use NAT64', '64:ff9b:1::808:808'],
  ['100::/64 discard-only', '100::1'],
  ['100:0:0:1::/64 dummy prefix', '100:0:0:1::1'],
  ['2001::/23 IETF protocol assignments', '2001:1ff::1'],
  ['2001::/32 Teredo', '2001:0:4136:e378:8000:63bf:3fff:fdd2'],
  ['2001:2::/48 benchmarking', '2001:2::5'],
  ['2001:10::/28 ORCHID', '2001:10::1'],
  ['2001:db8::/32 documentation', '2001:db8:1::1'],
  ['2002::/16 6to4 of a private address', '2002:a00:1::'],
  ['3fff::/20 documentation', '3fff:abc::1'],
  ['5f00::/16 segment routing SIDs', '5f00:1::1'],
  ['fc00::/7 unique local', 'fd00:1::1'],
  ['fe80::/10 link local', 'fe80::1234'],
  ['fec0::/10 site local', 'fec0::1'],
  ['ff00::/8 multicast', 'ff02::1'],
];

const publicAddresses = ['8.8.8.8', '1.1.1.1', '192.88.98.1', '192.0.3.1', '2606:4700:4700::1111', '2001:200::1', '2a00:1450:4001::1', '3fff:1000::1'];

describe('webhook targets in the IANA special-purpose registries', () => {
  it.each(specialPurpose)('refuses %s (%s)', async (_range, address) => {
    expect(classifyAddress(address), address).not.toBeNull();
    const host = address.includes(':') ? `[${address}]` : address;
    const result = await checkWebhookTarget(`https://${host}/hook`, { ...open, resolve: noDns });
    expect(result).toMatchObject({ ok: false, refusal: { reason: 'forbidden_address' } });
  });

  it.each(publicAddresses)('accepts the public address %s', async (address) => {
    expect(classifyAddress(address)).toBeNull();
    const host = address.includes(':') ? `[${address}]` : address;
    expect((await checkWebhookTarget(`https://${host}/hook`, { ...open, resolve: noDns })).ok).toBe(true);
  });
});
