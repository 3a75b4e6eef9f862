/**
 * Outbound safety for webhook targets: a registered URL must not let an account make this service call into its
 * own network (SSRF). Checked at registration and again before every delivery, because DNS answers change.
 *
 * Rules:
 * - the URL is parsed by the WHATWG URL parser, so every spelling of an IP literal (`0x7f000001`, `2130706433`,
 *   `0177.0.0.1`, `127.1`, `127.0.0.1.`, percent-encoded or full-width digits, `[::ffff:127.0.0.1]`) is normalized
 *   before it is judged;
 * - `http:` or `https:` only, `https:` alone when `production` is true; no user name or password; at most
 *   `maxUrlLength` characters (default 2048);
 * - every address the host resolves to (all of them, A and AAAA) must be public unless `allowPrivateTargets` is true:
 *   every range of the IANA IPv4 and IPv6 Special-Purpose Address Registries that is not globally reachable
 *   (loopback, RFC 1918 and unique-local fc00::/7, link-local 169.254/16 with the cloud metadata address and
 *   fe80::/10, unspecified, CGNAT 100.64/10, broadcast, reserved, documentation, benchmarking, the IETF protocol
 *   assignments 192.0.0/24 and 2001::/23 with Teredo 2001::/32, the 6to4 relay anycast 192.88.99/24, local-use
 *   NAT64 64:ff9b:1::/48, discard-only and dummy prefixes, segment routing SIDs 5f00::/16) and multicast are
 *   refused, also when wrapped in IPv6 (IPv4-mapped, IPv4-compatible, IPv4-translated, NAT64 64:ff9b::/96,
 *   6to4 2002::/16).
 *
 * A check that passes returns the addresses it validated. The connection must go to one of them and nowhere else:
 * `pinnedLookup` gives an http(s) `lookup` function that only yields those addresses, so a second DNS answer (DNS
 * rebinding) can never redirect the request. TLS still verifies the certificate against the URL's host name.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP, isIPv4 } from 'node:net';
import type { LookupAddress, LookupOptions } from 'node:dns';

export const DEFAULT_MAX_WEBHOOK_URL_LENGTH = 2048;

export type AddressKind =
  | 'loopback'
  | 'private'
  | 'link_local'
  | 'unspecified'
  | 'multicast'
  | 'cgnat'
  | 'broadcast'
  | 'reserved';

export type TargetRefusal =
  | { reason: 'invalid_url' }
  | { reason: 'url_too_long'; maxLength: number }
  | { reason: 'unsupported_scheme'; scheme: string }
  | { reason: 'https_required' }
  | { reason: 'userinfo_not_allowed' }
  | { reason: 'unresolvable_host'; host: string }
  | { reason: 'forbidden_address'; host: string; address: string; kind: AddressKind };

export interface ValidatedAddress {
  address: string;
  family: 4 | 6;
}

export type TargetCheck =
  | { ok: true; url: URL; addresses: ValidatedAddress[] }
  | { ok: false; refusal: TargetRefusal };

/** All addresses of a host name, like `dns.lookup(host, { all: true })`; replaceable so tests can fake DNS. */
export type HostResolver = (hostname: string) => Promise<ValidatedAddress[]>;

export interface TargetGuardOptions {
  production: boolean;
  allowPrivateTargets: boolean;
  maxUrlLength?: number;
  resolve?: HostResolver;
}

const systemResolver: HostResolver = async (hostname) => {
  const found = await dnsLookup(hostname, { all: true, verbatim: true });
  return found.map((entry) => ({ address: entry.address, family: entry.family === 6 ? 6 : 4 }));
};

type Bytes = number[];

function ipv4Bytes(address: string): Bytes {
  return address.split('.').map(Number);
}

/** 16 bytes of an IPv6 address (with an optional zone id and trailing dotted IPv4 part), as `isIP` accepts it. */
function ipv6Bytes(address: string): Bytes {
  let text = address.split('%')[0] ?? '';
  const lastColon = text.lastIndexOf(':');
  const last = text.slice(lastColon + 1);
  if (isIPv4(last)) {
    // Rewrite a trailing dotted IPv4 part (::ffff:127.0.0.1) as two hex words.
    const [a = 0, b = 0, c = 0, d = 0] = ipv4Bytes(last);
    text = `${text.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const parse = (part: string): number[] => (part === '' ? [] : part.split(':').map((word) => parseInt(word, 16)));
  const [head = '', tail] = text.split('::');
  const left = parse(head);
  const right = tail === undefined ? [] : parse(tail);
  const words = tail === undefined ? left : [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right];
  return words.flatMap((word) => [(word >> 8) & 0xff, word & 0xff]);
}

function hasPrefix(bytes: Bytes, prefix: Bytes, bits: number): boolean {
  for (let bit = 0; bit < bits; bit++) {
    const mask = 0x80 >> bit % 8;
    const index = Math.floor(bit / 8);
    if (((bytes[index] ?? 0) & mask) !== ((prefix[index] ?? 0) & mask)) return false;
  }
  return true;
}

const V4_RANGES: ReadonlyArray<[Bytes, number, AddressKind]> = [
  [[0, 0, 0, 0], 32, 'unspecified'],
  [[0, 0, 0, 0], 8, 'reserved'], // "this network"
  [[127, 0, 0, 0], 8, 'loopback'],
  [[10, 0, 0, 0], 8, 'private'],
  [[172, 16, 0, 0], 12, 'private'],
  [[192, 168, 0, 0], 16, 'private'],
  [[169, 254, 0, 0], 16, 'link_local'],
  [[100, 64, 0, 0], 10, 'cgnat'],
  [[192, 0, 0, 0], 24, 'reserved'], // IETF protocol assignments
  [[192, 0, 2, 0], 24, 'reserved'], // documentation
  [[198, 51, 100, 0], 24, 'reserved'],
  [[203, 0, 113, 0], 24, 'reserved'],
  [[198, 18, 0, 0], 15, 'reserved'], // benchmarking
  [[192, 88, 99, 0], 24, 'reserved'], // deprecated 6to4 relay anycast: it hands packets to whichever relay is near
  [[224, 0, 0, 0], 4, 'multicast'],
  [[255, 255, 255, 255], 32, 'broadcast'],
  [[240, 0, 0, 0], 4, 'reserved'],
];

const V6_RANGES: ReadonlyArray<[Bytes, number, AddressKind]> = [
  [[], 128, 'unspecified'],
  [[...Array(15).fill(0), 1], 128, 'loopback'],
  [[0xfc], 7, 'private'],
  [[0xfe, 0x80], 10, 'link_local'],
  [[0xfe, 0xc0], 10, 'private'], // deprecated site-local
  [[0xff], 8, 'multicast'],
  [[0x01, 0x00, 0, 0, 0, 0, 0, 0], 64, 'reserved'], // discard-only
  [[0x01, 0x00, 0, 0, 0, 0, 0, 1], 64, 'reserved'], // dummy prefix
  [[0x00, 0x64, 0xff, 0x9b, 0x00, 0x01], 48, 'reserved'], // local-use IPv4/IPv6 translation: NAT64 into this network
  // IETF protocol assignments, Teredo 2001::/32 among them (its IPv4 server and client are not ours to judge). The
  // few globally reachable assignments inside (anycast service addresses, AMT, AS112, ORCHIDv2, drone remote ID)
  // are no webhook receivers.
  [[0x20, 0x01, 0x00, 0x00], 23, 'reserved'],
  [[0x20, 0x01, 0x0d, 0xb8], 32, 'reserved'], // documentation
  [[0x3f, 0xff], 20, 'reserved'], // documentation
  [[0x5f, 0x00], 16, 'reserved'], // segment routing SIDs
];

function classifyIPv4(bytes: Bytes): AddressKind | null {
  for (const [prefix, bits, kind] of V4_RANGES) if (hasPrefix(bytes, prefix, bits)) return kind;
  return null;
}

/** Why an address may not be a webhook target, or null for a public address. Throws for a non-IP string. */
export function classifyAddress(address: string): AddressKind | null {
  const family = isIP(address.split('%')[0] ?? '');
  if (family === 4) return classifyIPv4(ipv4Bytes(address));
  if (family !== 6) throw new TypeError(`not an IP address: ${address}`);
  const bytes = ipv6Bytes(address);
  for (const [prefix, bits, kind] of V6_RANGES) if (hasPrefix(bytes, prefix, bits)) return kind;
  // IPv6 forms that carry an IPv4 address a router or the kernel may deliver to: judge the IPv4 address.
  const embedded = (prefix: Bytes, bits: number, offset: number): Bytes | null =>
    hasPrefix(bytes, prefix, bits) ? bytes.slice(offset, offset + 4) : null;
  const v4 =
    embedded([...Array(10).fill(0), 0xff, 0xff], 96, 12) ?? // IPv4-mapped ::ffff:a.b.c.d
    embedded([], 96, 12) ?? // IPv4-compatible ::a.b.c.d (deprecated)
    embedded([...Array(8).fill(0), 0xff, 0xff, 0, 0], 96, 12) ?? // IPv4-translated ::ffff:0:a.b.c.d (SIIT)
    embedded([0x00, 0x64, 0xff, 0x9b, ...Array(8).fill(0)], 96, 12) ?? // NAT64 64:ff9b::/96
    embedded([0x20, 0x02], 16, 2); // 6to4 2002:aabb:ccdd::
  return v4 ? classifyIPv4(v4) : null;
}

/** Syntax rules only (scheme, userinfo, length): usable without DNS. */
export function checkWebhookUrlSyntax(
  raw: string,
  options: Pick<TargetGuardOptions, 'production' | 'maxUrlLength'>,
): { ok: true; url: URL } | { ok: false; refusal: TargetRefusal } {
  const maxLength = options.maxUrlLength ?? DEFAULT_MAX_WEBHOOK_URL_LENGTH;
  if (raw.length > maxLength) return { ok: false, refusal: { reason: 'url_too_long', maxLength } };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, refusal: { reason: 'invalid_url' } };
  }
  if (url.href.length > maxLength) return { ok: false, refusal: { reason: 'url_too_long', maxLength } };
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    return { ok: false, refusal: { reason: 'unsupported_scheme', scheme: url.protocol.replace(/:$/, '') } };
  }
  if (url.protocol === 'http:' && options.production) return { ok: false, refusal: { reason: 'https_required' } };
  if (url.username !== '' || url.password !== '') return { ok: false, refusal: { reason: 'userinfo_not_allowed' } };
  if (url.hostname === '') return { ok: false, refusal: { reason: 'invalid_url' } };
  return { ok: true, url };
}

/** The URL's host without IPv6 brackets, as a connection needs it. */
export function connectHost(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

/** The full check: syntax, then every resolved address. */
export async function checkWebhookTarget(raw: string, options: TargetGuardOptions): Promise<TargetCheck> {
  const syntax = checkWebhookUrlSyntax(raw, options);
  if (!syntax.ok) return syntax;
  const { url } = syntax;
  const host = connectHost(url);
  let addresses: ValidatedAddress[];
  const literal = isIP(host);
  if (literal !== 0) {
    addresses = [{ address: host, family: literal === 6 ? 6 : 4 }];
  } else {
    try {
      addresses = await (options.resolve ?? systemResolver)(host);
    } catch {
      addresses = [];
    }
    addresses = addresses.filter((entry) => isIP(entry.address) !== 0);
    if (addresses.length === 0) return { ok: false, refusal: { reason: 'unresolvable_host', host } };
  }
  if (!options.allowPrivateTargets) {
    for (const { address } of addresses) {
      const kind = classifyAddress(address);
      if (kind) return { ok: false, refusal: { reason: 'forbidden_address', host, address, kind } };
    }
  }
  return { ok: true, url, addresses };
}

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/**
 * A `lookup` for http.request / https.request / an Agent that answers only with the given validated addresses, so
 * the socket connects to exactly what the guard approved. Honours `family` and `all` as Node's dns.lookup does
 * (Node 20 asks with `all: true` for happy-eyeballs connection attempts).
 */
export function pinnedLookup(addresses: readonly ValidatedAddress[]) {
  return (hostname: string, options: LookupOptions | number, callback: LookupCallback): void => {
    const opts: LookupOptions = typeof options === 'number' ? { family: options } : options;
    const wanted = opts.family === 4 || opts.family === 'IPv4' ? 4 : opts.family === 6 || opts.family === 'IPv6' ? 6 : 0;
    const usable = addresses.filter((entry) => wanted === 0 || entry.family === wanted);
    if (usable.length === 0) {
      const error: NodeJS.ErrnoException = new Error(`no validated address for ${hostname}`);
      error.code = 'ENOTFOUND';
      process.nextTick(callback, error, '', 0);
      return;
    }
    const first = usable[0] as ValidatedAddress;
    if (opts.all) process.nextTick(callback, null, usable.map((entry) => ({ ...entry })));
    else process.nextTick(callback, null, first.address, first.family);
  };
}
