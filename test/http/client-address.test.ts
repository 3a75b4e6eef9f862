import { describe, expect, it } from 'vitest';
import { clientAddressKey } from '../../src/http/client-address.js';

describe('clientAddressKey (the key of per-address budgets)', () => {
  it('keeps an IPv4 address as it is', () => {
    expect(clientAddressKey('203.0.113.7')).toBe('203.0.113.7');
  });

  it('turns an IPv4-mapped IPv6 address into its IPv4 address, in either notation', () => {
    expect(clientAddressKey('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(clientAddressKey('::FFFF:cb00:7107')).toBe('203.0.113.7');
    expect(clientAddressKey('0:0:0:0:0:ffff:203.0.113.7')).toBe('203.0.113.7');
  });

  it('reduces any other IPv6 address to its /64, whatever its spelling', () => {
    const key = clientAddressKey('2001:db8:a:b::1');
    expect(key).toBe('2001:db8:a:b::/64');
    for (const same of ['2001:db8:a:b:ffff:ffff:ffff:ffff', '2001:0DB8:000a:000b:0:0:0:2', '2001:db8:a:b::1.2.3.4', '2001:db8:a:b::1%eth0']) {
      expect(clientAddressKey(same), same).toBe(key);
    }
    expect(clientAddressKey('2001:db8:a:c::1')).not.toBe(key);
    expect(clientAddressKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(clientAddressKey('::1')).toBe('0:0:0:0::/64');
    expect(clientAddressKey('1::')).toBe('1:0:0:0::/64');
  });

  it('keeps a value that is no IP address as it is', () => {
    expect(clientAddressKey('unknown')).toBe('unknown');
  });
});
