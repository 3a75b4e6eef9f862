/** Parsers of setting values: each reads one raw environment value and returns it typed, or throws BadValue. */
import { isIP } from 'node:net';

export interface Setting<T> {
  name: string;
  description: string;
  /** Shown in docs/configuration.md; `undefined` means "unset". */
  defaultText: string;
  parse: (raw: string | undefined, env: NodeJS.ProcessEnv) => T;
}

/** Every setting of a concern, keyed by its field of the configuration object. */
export type Settings<C> = { [K in keyof C]: Setting<C[K]> & { key: K } };

export class BadValue extends Error {}

export function integer(name: string, min: number, max: number, fallback: number) {
  return (raw: string | undefined): number => {
    if (raw === undefined || raw === '') return fallback;
    if (!/^\d+$/.test(raw.trim())) throw new BadValue(`${name}=${JSON.stringify(raw)} is not a whole number`);
    const value = Number(raw.trim());
    if (value < min || value > max) throw new BadValue(`${name}=${raw} must be between ${min} and ${max}`);
    return value;
  };
}

export function oneOf<T extends string>(name: string, allowed: readonly T[], fallback: T) {
  return (raw: string | undefined): T => {
    if (raw === undefined || raw === '') return fallback;
    const value = raw.trim().toLowerCase() as T;
    if (!allowed.includes(value)) {
      throw new BadValue(`${name}=${JSON.stringify(raw)} must be one of: ${allowed.join(', ')}`);
    }
    return value;
  };
}

export function databaseUrl(raw: string | undefined, env: NodeJS.ProcessEnv): string {
  if (raw === undefined || raw === '') return `sqlite:${(env.DATA_DIR ?? '').trim() || './data'}/stampgate.sqlite`;
  const value = raw.trim();
  if (/^postgres(ql)?:\/\/.+/.test(value) || /^sqlite:.+/.test(value)) return value;
  throw new BadValue(
    `DATABASE_URL=${JSON.stringify(raw)} must start with postgres:// (PostgreSQL) or sqlite: (for example sqlite:./data/stampgate.sqlite or sqlite::memory:)`,
  );
}

export function publicBaseUrl(raw: string | undefined): string | null {
  if (raw === undefined || raw === '') return null;
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new BadValue(`PUBLIC_BASE_URL=${JSON.stringify(raw)} is not an absolute URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new BadValue(`PUBLIC_BASE_URL=${JSON.stringify(raw)} must use http or https`);
  }
  return url.toString().replace(/\/+$/, '');
}

export function iconBaseUrl(raw: string | undefined): string | null {
  if (raw === undefined || raw.trim() === '') return null;
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new BadValue(`ICON_BASE_URL=${JSON.stringify(raw)} is not an absolute URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new BadValue(`ICON_BASE_URL=${JSON.stringify(raw)} must use http or https`);
  if (url.search !== '' || url.hash !== '') throw new BadValue(`ICON_BASE_URL=${JSON.stringify(raw)} must not carry a query or fragment`);
  return url.toString().replace(/\/+$/, '');
}


export function isProduction(env: NodeJS.ProcessEnv): boolean {
  return (env.STAMPGATE_ENV ?? '').trim().toLowerCase() === 'production';
}

export const PROXY_KEYWORDS = ['loopback', 'linklocal', 'uniquelocal'];

/** Trusted proxies: IP addresses and CIDR ranges, as Fastify's `trustProxy` (proxy-addr) reads them. */
export function proxyList(raw: string | undefined): string[] {
  if (raw === undefined || raw.trim() === '') return [];
  const entries = raw.split(',').map((e) => e.trim()).filter(Boolean);
  for (const entry of entries) {
    if (PROXY_KEYWORDS.includes(entry.toLowerCase())) continue;
    const [address = '', prefix, extra] = entry.split('/');
    const version = isIP(address);
    const bits = version === 4 ? 32 : 128;
    const prefixOk = prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= bits);
    if (version === 0 || !prefixOk || extra !== undefined) {
      throw new BadValue(
        `TRUST_PROXY has ${JSON.stringify(entry)}, which is not an IP address, a CIDR range such as 10.0.0.0/8, or one of ${PROXY_KEYWORDS.join(', ')}`,
      );
    }
  }
  return entries.map((e) => (PROXY_KEYWORDS.includes(e.toLowerCase()) ? e.toLowerCase() : e));
}

export function flag(name: string, fallback: boolean) {
  return (raw: string | undefined): boolean => {
    if (raw === undefined || raw.trim() === '') return fallback;
    const value = raw.trim().toLowerCase();
    if (['1', 'true', 'yes', 'on'].includes(value)) return true;
    if (['0', 'false', 'no', 'off'].includes(value)) return false;
    throw new BadValue(`${name}=${JSON.stringify(raw)} must be true or false`);
  };
}

export function optionalUrl(name: string) {
  return (raw: string | undefined): string | null => {
    if (raw === undefined || raw.trim() === '') return null;
    return httpUrl(name, raw);
  };
}

export function urlWithDefault(name: string, fallback: string) {
  return (raw: string | undefined): string => (raw === undefined || raw.trim() === '' ? fallback : httpUrl(name, raw));
}

export function httpUrl(name: string, raw: string): string {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new BadValue(`${name}=${JSON.stringify(raw)} is not an absolute URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new BadValue(`${name}=${JSON.stringify(raw)} must use http or https`);
  return raw.trim();
}

export function optionalContractAddress(name: string) {
  return (raw: string | undefined): string | null => {
    if (raw === undefined || raw.trim() === '') return null;
    if (!/^0x[0-9a-fA-F]{40}$/.test(raw.trim())) throw new BadValue(`${name}=${JSON.stringify(raw)} is not 0x followed by 40 hexadecimal digits`);
    return raw.trim().toLowerCase();
  };
}

export function optionalText(raw: string | undefined): string | null {
  return raw === undefined || raw.trim() === '' ? null : raw.trim();
}

export function originList(raw: string | undefined): string[] {
  if (raw === undefined || raw.trim() === '') return [];
  const origins = raw.split(',').map((o) => o.trim()).filter(Boolean);
  for (const origin of origins) {
    if (origin === '*') continue;
    let url: URL | null;
    try {
      url = new URL(origin);
    } catch {
      url = null;
    }
    if (!url || url.origin !== origin.replace(/\/$/, '')) {
      throw new BadValue(`CORS_ORIGINS has ${JSON.stringify(origin)}, which is not an origin such as https://app.example.org or *`);
    }
  }
  return origins.map((o) => o.replace(/\/$/, ''));
}

export function chainIdList(raw: string | undefined): number[] {
  if (raw === undefined || raw.trim() === '') return [1];
  const items = raw.split(',').map((item) => item.trim()).filter(Boolean);
  const bad = items.filter((item) => !/^[1-9]\d{0,14}$/.test(item));
  if (items.length === 0 || bad.length > 0) {
    throw new BadValue(`SIWE_ALLOWED_CHAIN_IDS=${JSON.stringify(raw)} must be a comma-separated list of positive integers`);
  }
  return [...new Set(items.map(Number))];
}

export function issuerList(raw: string | undefined): string[] {
  if (raw === undefined || raw.trim() === '') return [];
  const dids = raw.split(',').map((d) => d.trim().toLowerCase()).filter(Boolean);
  const bad = dids.filter((d) => !/^did:ethr:0x[0-9a-f]{40}$/.test(d));
  if (bad.length > 0) throw new BadValue(`TRUSTED_ISSUERS has ${bad.map((d) => JSON.stringify(d)).join(', ')}, not of the form did:ethr:0x<40 hex digits>`);
  return [...new Set(dids)];
}
