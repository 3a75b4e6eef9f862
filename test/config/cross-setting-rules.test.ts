/**
 * The whole configuration is checked at load: every setting's own value, then the rules across
 * settings of what the process is started for, all reported in one ConfigError.
 */
import { describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkConfig, type Config, ConfigError, type ConfigPurpose, type ConfigRule, describeSettings, loadConfig } from '../../src/config/index.js';
import { startupChecks } from '../../src/app/startup-checks.js';

function problemsOf(env: Record<string, string>, purpose?: ConfigPurpose, checks: readonly ConfigRule<Config>[] = []): string[] {
  try {
    loadConfig(env, purpose, checks);
    return [];
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).problems;
  }
}

/** Production with the grant team login on: it also needs SESSION_SECRET. */
const login = { STAMPGATE_ENV: 'production', OAUTH_CLIENT_ID: 'client-id', OAUTH_CLIENT_SECRET: 'client-secret' };

describe('one load reports every problem of the configuration', () => {
  it('a bad PUBLIC_BASE_URL, a bad HOST and a missing SESSION_SECRET: three problems, each naming its setting with an example', () => {
    const problems = problemsOf({ ...login, PUBLIC_BASE_URL: 'scores.example.org', HOST: '0.0.0.0:8000' }, 'serve');
    expect(problems).toEqual([
      expect.stringMatching(/^HOST="0\.0\.0\.0:8000" is not an IP address or host name .*; for example HOST=0\.0\.0\.0$/),
      expect.stringMatching(/^PUBLIC_BASE_URL="scores\.example\.org" is not an absolute URL; for example PUBLIC_BASE_URL=https:\/\/scores\.example\.org$/),
      expect.stringMatching(/^SESSION_SECRET must be set .* in production when OAUTH_CLIENT_ID .*; for example SESSION_SECRET=\$\(openssl rand -base64 32\)$/),
    ]);
    try {
      loadConfig({ ...login, PUBLIC_BASE_URL: 'scores.example.org', HOST: '0.0.0.0:8000' }, 'serve');
    } catch (error) {
      expect((error as Error).message.split('\n')).toEqual(['Invalid configuration:', ...problems.map((p) => `  - ${p}`)]);
    }
  });

  it('production without HOST, PUBLIC_BASE_URL and SESSION_SECRET: all three requirements at once, not one per start', () => {
    expect(problemsOf(login, 'serve')).toEqual([
      expect.stringMatching(/^HOST must be set in production: .*; for example HOST=0\.0\.0\.0$/),
      expect.stringMatching(/^PUBLIC_BASE_URL must be set in production: .*; for example PUBLIC_BASE_URL=https:\/\/scores\.example\.org$/),
      expect.stringMatching(/^SESSION_SECRET must be set/),
    ]);
  });

  it('reports setting problems and rule problems together', () => {
    const problems = problemsOf({ PORT: 'eighty', HEADERS_TIMEOUT_MS: '20000', REQUEST_TIMEOUT_MS: '10000' }, 'serve');
    expect(problems).toEqual([
      'PORT="eighty" is not a whole number; for example PORT=8000',
      'HEADERS_TIMEOUT_MS (20000) must not be longer than REQUEST_TIMEOUT_MS (10000): the headers are part of the request; for example HEADERS_TIMEOUT_MS=10000',
    ]);
    expect(problemsOf({ REQUEST_TIMEOUT_MS: '5000', HEADERS_TIMEOUT_MS: '20000' }, 'serve')[0]).toMatch(/for example HEADERS_TIMEOUT_MS=5000$/);
    expect(problemsOf({ REQUEST_TIMEOUT_MS: '5000', HEADERS_TIMEOUT_MS: '5000' }, 'serve')).toEqual([]);
  });

  it('skips a rule whose setting is itself refused, rather than reporting it twice', () => {
    expect(problemsOf({ STAMPGATE_ENV: 'production', HOST: '0.0.0.0', PUBLIC_BASE_URL: 'ftp://scores.example.org' }, 'serve')).toEqual([
      expect.stringMatching(/^PUBLIC_BASE_URL="ftp:\/\/scores\.example\.org" must use http or https/),
    ]);
    expect(problemsOf({ HEADERS_TIMEOUT_MS: 'soon', REQUEST_TIMEOUT_MS: '1000' }, 'serve')).toEqual([expect.stringMatching(/^HEADERS_TIMEOUT_MS="soon"/)]);
  });
});

describe('which rules a process needs', () => {
  const production = { STAMPGATE_ENV: 'production', HEADERS_TIMEOUT_MS: '20000', REQUEST_TIMEOUT_MS: '10000', OAUTH_CLIENT_ID: 'client-id' };

  it('serve: every rule; worker: HOST only when it serves WORKER_PORT; any other command: none', () => {
    expect(problemsOf(production, 'serve').map((p) => p.split(' ')[0])).toEqual(['HOST', 'PUBLIC_BASE_URL', 'HEADERS_TIMEOUT_MS', 'SESSION_SECRET', 'OAUTH_CLIENT_SECRET']);
    expect(problemsOf(production, 'worker')).toEqual([]);
    expect(problemsOf({ ...production, WORKER_PORT: '9101' }, 'worker').map((p) => p.split(' ')[0])).toEqual(['HOST']);
    expect(problemsOf(production, 'command')).toEqual([]);
    expect(problemsOf(production)).toEqual([]);
    // A setting's own value is refused whatever the purpose.
    expect(problemsOf({ ...production, HOST: '[::1]' })).toEqual([expect.stringMatching(/^HOST="\[::1\]"/)]);
  });

  it('checkConfig runs the API rules on a configuration loaded for no purpose (what buildServer does), not the binding one', () => {
    const config = loadConfig(production);
    try {
      checkConfig(config, ['api']);
      expect.unreachable();
    } catch (error) {
      expect((error as ConfigError).problems.map((p) => p.split(' ')[0])).toEqual(['PUBLIC_BASE_URL', 'HEADERS_TIMEOUT_MS', 'SESSION_SECRET', 'OAUTH_CLIENT_SECRET']);
    }
    expect(() => checkConfig(loadConfig({ STAMPGATE_ENV: 'production', PUBLIC_BASE_URL: 'https://scores.example.org' }), ['api'])).not.toThrow();
  });
});

describe('checks of files a setting names (startupChecks)', () => {
  it('joins a broken STAMP_CATALOGUE_FILE to the list, for serve and worker alike', () => {
    const dir = mkdtempSync(join(tmpdir(), 'stampgate-catalogue-'));
    try {
      const file = join(dir, 'catalogue.json');
      writeFileSync(file, '{"threshold": "twenty", "platforms": []}');
      const broken = `STAMP_CATALOGUE_FILE=${JSON.stringify(file)} is not a usable stamp catalogue`;
      expect(problemsOf({ STAMP_CATALOGUE_FILE: file, PORT: 'x' }, 'worker', startupChecks)).toEqual([
        expect.stringMatching(/^PORT="x"/),
        expect.stringContaining(broken),
      ]);
      expect(problemsOf({ STAMP_CATALOGUE_FILE: join(dir, 'missing.json') }, 'serve', startupChecks)).toEqual([
        expect.stringMatching(/is not a usable stamp catalogue: cannot read the file .*; for example STAMP_CATALOGUE_FILE=\.\/stamp-catalogue\.json/),
      ]);
      // The shipped catalogue, when the variable is unset, is not read twice nor refused.
      expect(problemsOf({}, 'serve', startupChecks)).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('HOST', () => {
  it.each(['0.0.0.0', '127.0.0.1', '::', '::1', 'localhost', 'api.internal', 'stampgate-1.svc.cluster.local'])('takes %s', (host) => {
    expect(loadConfig({ HOST: host }).host).toBe(host);
  });

  it.each(['0.0.0.0:8000', '[::1]', '999.1.1.1', 'not a host', 'http://0.0.0.0', '-leading.example'])('refuses %s, with an example', (host) => {
    expect(problemsOf({ HOST: host })).toEqual([`HOST=${JSON.stringify(host)} is not an IP address or host name (without a port or brackets); for example HOST=0.0.0.0`]);
  });
});

describe('every refused value names its setting and gives an example the setting takes', () => {
  const refusable = ['not valid!', '-1', '99999999999999999999', 'ftp://x', 'x,y', '0x12'];

  // A family of variables (ONCHAIN_RPC_URL_<chain id>) is no variable of its own: its members are tested below.
  it.each(describeSettings().map((s) => s.name).filter((name) => !name.includes('<')))('%s', (name) => {
    for (const value of refusable) {
      for (const problem of problemsOf({ [name]: value })) {
        expect(problem.startsWith(name) || problem.startsWith(`${name}=`)).toBe(true);
        const example = new RegExp(`; for example ${name}=(\\S+)`).exec(problem)?.[1];
        expect(example, problem).toBeDefined();
        // Secrets are shown as the command that makes one: a literal would be copied into deployments.
        if (example!.startsWith('$(')) continue;
        expect(problemsOf({ [name]: example! }), `${name}=${example}`).toEqual([]);
      }
    }
  });

  it('ONCHAIN_RPC_URL_<chain id>: a member that is no chain id or no URL is refused with an example that is taken', () => {
    const [badId] = problemsOf({ ONCHAIN_RPC_URL_OP: 'https://rpc.example.org' });
    expect(badId).toMatch(/^ONCHAIN_RPC_URL_OP: .*; for example ONCHAIN_RPC_URL_10=https:\/\/mainnet.optimism.io$/);
    const [badUrl] = problemsOf({ ONCHAIN_RPC_URL_10: 'ftp://x' });
    const example = /; for example (ONCHAIN_RPC_URL_10)=(\S+)/.exec(badUrl ?? '');
    expect(example).not.toBeNull();
    expect(problemsOf({ [example![1]!]: example![2]! })).toEqual([]);
  });

  it('refuses something of most settings (the check above is not vacuous)', () => {
    const refusing = describeSettings().filter(({ name }) => refusable.some((value) => problemsOf({ [name]: value }).length > 0));
    expect(refusing.length).toBeGreaterThan(80);
  });
});
