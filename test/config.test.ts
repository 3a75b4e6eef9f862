import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ConfigError, describeSettings, loadConfig } from '../src/config/index.js';

describe('loadConfig', () => {
  it('gives the documented defaults for an empty environment', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      env: 'development',
      port: 8000,
      host: '127.0.0.1',
      databaseUrl: 'sqlite:./data/stampgate.sqlite',
      publicBaseUrl: null,
      logLevel: 'info',
      nonceTtlSeconds: 600,
      rateLimitTier4: 10_000,
      rateLimitWindowMs: 900_000,
    });
  });

  it('reads every variable it documents', () => {
    const config = loadConfig({
      STAMPGATE_ENV: 'Production',
      PORT: '9000',
      DATABASE_URL: 'postgres://u@db:5432/x',
      PUBLIC_BASE_URL: 'https://api.example.org/',
      RATE_LIMIT_TIER4: '50000',
    });
    expect(config.env).toBe('production');
    expect(config.port).toBe(9000);
    expect(config.databaseUrl).toBe('postgres://u@db:5432/x');
    expect(config.publicBaseUrl).toBe('https://api.example.org');
    expect(config.rateLimitTier4).toBe(50_000);
  });

  it.each([
    ['PORT', 'eighty', /PORT="eighty" is not a whole number/],
    ['PORT', '70000', /PORT=70000 must be between 0 and 65535/],
    ['STAMPGATE_ENV', 'staging', /STAMPGATE_ENV="staging" must be one of: development, production/],
    ['DATABASE_URL', 'mysql://x', /DATABASE_URL="mysql:\/\/x" must start with postgres:\/\//],
    ['PUBLIC_BASE_URL', 'not a url', /PUBLIC_BASE_URL="not a url" is not an absolute URL/],
    ['PUBLIC_BASE_URL', 'ftp://x.org', /must use http or https/],
    ['LOG_LEVEL', 'loud', /LOG_LEVEL="loud" must be one of/],
    ['RATE_LIMIT_TIER4', '2000', /RATE_LIMIT_TIER4=2000 must be between 2001/],
    ['NONCE_TTL_SECONDS', '-5', /NONCE_TTL_SECONDS="-5" is not a whole number/],
    ['TRUST_PROXY', '10.0.0.0/33', /TRUST_PROXY has "10.0.0.0\/33", which is not an IP address, a CIDR range/],
    ['TRUST_PROXY', '127.0.0.1, proxy.local', /TRUST_PROXY has "proxy.local"/],
    ['TRUST_PROXY', '::1/129', /TRUST_PROXY has "::1\/129"/],
    ['HEADERS_TIMEOUT_MS', '0', /HEADERS_TIMEOUT_MS=0 must be between 100/],
    ['METRICS_PUBLIC', 'maybe', /METRICS_PUBLIC="maybe" must be true or false/],
  ])('refuses %s=%s with a clear message', (name, value, message) => {
    expect(() => loadConfig({ [name]: value })).toThrow(message);
  });

  it('reads the network and timeout settings, with production defaults of their own', () => {
    expect(loadConfig({})).toMatchObject({
      trustProxy: [],
      requestTimeoutMs: 30_000,
      headersTimeoutMs: 10_000,
      keepAliveTimeoutMs: 5000,
      outboundTimeoutMs: 10_000,
      metricsPort: null,
      metricsPublic: true,
    });
    expect(loadConfig({ STAMPGATE_ENV: 'production' })).toMatchObject({ host: null, metricsPublic: false });
    expect(loadConfig({ TRUST_PROXY: ' 10.0.0.1 , 192.168.0.0/16,::1, fd00::/8, Loopback ', METRICS_PORT: '9100' })).toMatchObject({
      trustProxy: ['10.0.0.1', '192.168.0.0/16', '::1', 'fd00::/8', 'loopback'],
      metricsPort: 9100,
    });
  });

  it('reports every bad value at once', () => {
    try {
      loadConfig({ PORT: 'x', LOG_LEVEL: 'y' });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).problems).toHaveLength(2);
    }
  });
});

describe('the configuration reference (docs/configuration.md)', () => {
  it('lists exactly the variables the code reads, with their defaults', () => {
    const readme = readFileSync(new URL('../docs/configuration.md', import.meta.url), 'utf8');
    const rows = [...readme.matchAll(/^\| `([A-Z0-9_]+(?:<chain id>)?)` \| ([^|]*) \|/gm)].map((m) => [m[1], m[2]!.trim()]);
    const documented = new Map(rows as [string, string][]);
    const settings = describeSettings();
    expect([...documented.keys()].sort()).toEqual(settings.map((s) => s.name).sort());
    for (const setting of settings) expect(documented.get(setting.name)).toBe(`\`${setting.defaultText}\``);
  });
});
