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

/** The tail of every refusal: a value the setting would take, so the fix can be copied. */
export function forExample(name: string, value: string): string {
  return `; for example ${name}=${value}`;
}

/**
 * What a process is started to do, which decides how much of the configuration it needs:
 * `serve` builds the HTTP API and binds it, `worker` binds only with WORKER_PORT, a `command`
 * (an admin command, a migration) needs neither.
 */
export type ConfigPurpose = 'serve' | 'worker' | 'command';

/**
 * When a cross-setting rule applies: `any` in every process, `api` where the HTTP API is built
 * (every `serve`, and tools that build it), `bind` where a process listens on HOST (`serve`, a
 * `worker` with WORKER_PORT).
 */
export type RuleScope = 'any' | 'api' | 'bind';

/**
 * A check across settings, run after every setting has parsed. `reads` names the fields it looks
 * at: when one of them is itself refused, the rule is skipped, since that setting's own problem
 * is already reported.
 */
export interface ConfigRule<C> {
  scope: RuleScope;
  reads: readonly (keyof C)[];
  /** The problem, naming the settings and giving an example value, or null. */
  check: (config: C) => string | null;
}

export function integer(name: string, min: number, max: number, fallback: number) {
  const example = forExample(name, String(fallback >= min && fallback <= max ? fallback : min));
  return (raw: string | undefined): number => {
    if (raw === undefined || raw === '') return fallback;
    if (!/^\d+$/.test(raw.trim())) throw new BadValue(`${name}=${JSON.stringify(raw)} is not a whole number${example}`);
    const value = Number(raw.trim());
    if (value < min || value > max) throw new BadValue(`${name}=${raw} must be between ${min} and ${max}${example}`);
    return value;
  };
}

export function oneOf<T extends string>(name: string, allowed: readonly T[], fallback: T) {
  return (raw: string | undefined): T => {
    if (raw === undefined || raw === '') return fallback;
    const value = raw.trim().toLowerCase() as T;
    if (!allowed.includes(value)) {
      throw new BadValue(`${name}=${JSON.stringify(raw)} must be one of: ${allowed.join(', ')}${forExample(name, fallback)}`);
    }
    return value;
  };
}

export function databaseUrl(raw: string | undefined, env: NodeJS.ProcessEnv): string {
  if (raw === undefined || raw === '') return `sqlite:${(env.DATA_DIR ?? '').trim() || './data'}/stampgate.sqlite`;
  const value = raw.trim();
  if (/^postgres(ql)?:\/\/.+/.test(value) || /^sqlite:.+/.test(value)) return value;
  throw new BadValue(
    `DATABASE_URL=${JSON.stringify(raw)} must start with postgres:// (PostgreSQL) or sqlite: (SQLite)${forExample('DATABASE_URL', 'postgres://stampgate@db.internal:5432/stampgate')} or DATABASE_URL=sqlite:./data/stampgate.sqlite`,
  );
}

export const PUBLIC_BASE_URL_EXAMPLE = forExample('PUBLIC_BASE_URL', 'https://scores.example.org');

export function publicBaseUrl(raw: string | undefined): string | null {
  if (raw === undefined || raw === '') return null;
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new BadValue(`PUBLIC_BASE_URL=${JSON.stringify(raw)} is not an absolute URL${PUBLIC_BASE_URL_EXAMPLE}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new BadValue(`PUBLIC_BASE_URL=${JSON.stringify(raw)} must use http or https${PUBLIC_BASE_URL_EXAMPLE}`);
  }
  return url.toString().replace(/\/+$/, '');
}

export function iconBaseUrl(raw: string | undefined): string | null {
  if (raw === undefined || raw.trim() === '') return null;
  const example = forExample('ICON_BASE_URL', 'https://cdn.example.org/stampgate-icons');
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new BadValue(`ICON_BASE_URL=${JSON.stringify(raw)} is not an absolute URL${example}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new BadValue(`ICON_BASE_URL=${JSON.stringify(raw)} must use http or https${example}`);
  if (url.search !== '' || url.hash !== '') throw new BadValue(`ICON_BASE_URL=${JSON.stringify(raw)} must not carry a query or fragment${example}`);
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
        `TRUST_PROXY has ${JSON.stringify(entry)}, which is not an IP address, a CIDR range such as 10.0.0.0/8, or one of ${PROXY_KEYWORDS.join(', ')}${forExample('TRUST_PROXY', '10.0.0.1,192.168.0.0/16')}`,
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
    throw new BadValue(`${name}=${JSON.stringify(raw)} must be true or false${forExample(name, String(!fallback))}`);
  };
}

/** The example of the JSON-RPC endpoint settings. */
export const RPC_URL_EXAMPLE = 'https://rpc.example.org';

export function optionalUrl(name: string, example = RPC_URL_EXAMPLE) {
  return (raw: string | undefined): string | null => {
    if (raw === undefined || raw.trim() === '') return null;
    return httpUrl(name, raw, example);
  };
}

export function urlWithDefault(name: string, fallback: string) {
  return (raw: string | undefined): string => (raw === undefined || raw.trim() === '' ? fallback : httpUrl(name, raw, fallback));
}

export function httpUrl(name: string, raw: string, example: string): string {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new BadValue(`${name}=${JSON.stringify(raw)} is not an absolute URL${forExample(name, example)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new BadValue(`${name}=${JSON.stringify(raw)} must use http or https${forExample(name, example)}`);
  return raw.trim();
}

export function optionalContractAddress(name: string) {
  return (raw: string | undefined): string | null => {
    if (raw === undefined || raw.trim() === '') return null;
    if (!/^0x[0-9a-fA-F]{40}$/.test(raw.trim())) {
      throw new BadValue(`${name}=${JSON.stringify(raw)} is not 0x followed by 40 hexadecimal digits${forExample(name, '0x0123456789abcdef0123456789abcdef01234567')}`);
    }
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
      throw new BadValue(`CORS_ORIGINS has ${JSON.stringify(origin)}, which is not an origin such as https://app.example.org or *${forExample('CORS_ORIGINS', 'https://app.example.org,https://admin.example.org')}`);
    }
  }
  return origins.map((o) => o.replace(/\/$/, ''));
}

export function chainIdList(raw: string | undefined): number[] {
  if (raw === undefined || raw.trim() === '') return [1];
  const items = raw.split(',').map((item) => item.trim()).filter(Boolean);
  const bad = items.filter((item) => !/^[1-9]\d{0,14}$/.test(item));
  if (items.length === 0 || bad.length > 0) {
    throw new BadValue(`SIWE_ALLOWED_CHAIN_IDS=${JSON.stringify(raw)} must be a comma-separated list of positive integers${forExample('SIWE_ALLOWED_CHAIN_IDS', '1,10')}`);
  }
  return [...new Set(items.map(Number))];
}

export function issuerList(raw: string | undefined): string[] {
  if (raw === undefined || raw.trim() === '') return [];
  const dids = raw.split(',').map((d) => d.trim().toLowerCase()).filter(Boolean);
  const bad = dids.filter((d) => !/^did:ethr:0x[0-9a-f]{40}$/.test(d));
  if (bad.length > 0) {
    throw new BadValue(
      `TRUSTED_ISSUERS has ${bad.map((d) => JSON.stringify(d)).join(', ')}, not of the form did:ethr:0x<40 hex digits>${forExample('TRUSTED_ISSUERS', 'did:ethr:0x0123456789abcdef0123456789abcdef01234567')}`,
    );
  }
  return [...new Set(dids)];
}
