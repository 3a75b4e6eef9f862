/** The grant team login's settings, and where it may send the browser after the login (safeNext). */
import { describe, expect, it } from 'vitest';
import { createAppContext } from '../../../src/app/container.js';
import { ConfigError, loadConfig } from '../../../src/config/index.js';
import { safeNext } from '../../../src/publicdata/exports/oauth.js';
import { buildServer } from '../../../src/app/server.js';
import { createTestApp } from '../../helpers/app.js';
import { openMigratedTestDatabase } from '../../helpers/databases.js';

describe('login configuration', () => {
  it('answers /grants/login with 404 when OAuth is not configured', async () => {
    const t = await createTestApp('sqlite');
    try {
      const res = await t.app.inject('/grants/login');
      expect(res.statusCode).toBe(404);
      expect(res.json().code).toBe('not_found');
    } finally {
      await t.close();
    }
  });

  it('refuses to build the server in production with OAuth configured but no SESSION_SECRET', async () => {
    const { test, database } = await openMigratedTestDatabase('sqlite');
    try {
      const config = loadConfig({ STAMPGATE_ENV: 'production', PUBLIC_BASE_URL: 'https://passport.example.org', OAUTH_CLIENT_ID: 'id', OAUTH_CLIENT_SECRET: 's', DATABASE_URL: test.url });
      const ctx = await createAppContext(config, database);
      await expect(buildServer(ctx, { logger: false })).rejects.toThrow(/SESSION_SECRET must be set/);
    } finally {
      await database.close();
      await test.drop();
    }
  });

  it('checks the login settings when the API is served, and not for other commands', () => {
    const served = { STAMPGATE_ENV: 'production', HOST: '0.0.0.0', PUBLIC_BASE_URL: 'https://passport.example.org' };
    const base = { ...served, OAUTH_CLIENT_ID: 'id', OAUTH_CLIENT_SECRET: 'secret' };
    const problemsOf = (env: Record<string, string>): string[] => {
      try {
        loadConfig(env, 'serve');
        return [];
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError);
        return (error as ConfigError).problems;
      }
    };
    expect(problemsOf(base)).toEqual([expect.stringMatching(/^SESSION_SECRET must be set .*; for example SESSION_SECRET=/)]);
    expect(problemsOf({ ...base, SESSION_SECRET: 'x'.repeat(32) })).toEqual([]);
    expect(problemsOf({ ...base, STAMPGATE_ENV: 'development' })).toEqual([]);
    expect(problemsOf({ ...base, PUBLIC_DATA_API_ENABLED: 'false' })).toEqual([]);
    expect(problemsOf(served)).toEqual([]);
    expect(problemsOf({ OAUTH_CLIENT_ID: 'id' })).toEqual([expect.stringMatching(/^OAUTH_CLIENT_SECRET must be set .*; for example OAUTH_CLIENT_SECRET=/)]);
    // Commands that serve nothing load the same settings without the rules of serving.
    expect(() => loadConfig(base)).not.toThrow();
    expect(() => loadConfig({ OAUTH_CLIENT_ID: 'id' })).not.toThrow();
  });
});

describe('safeNext', () => {
  it.each([
    ['/grants/v1/api/export_addresses/grant1.json', '/grants/v1/api/export_addresses/grant1.json'],
    ['/grants/x?y=1&z=%C3%A9', '/grants/x?y=1&z=%C3%A9'],
    ['//evil.example', '/grants/grants.json'],
    ['/\\evil.example', '/grants/grants.json'],
    ['https://evil.example/', '/grants/grants.json'],
    ['/grants/é', '/grants/grants.json'],
    ['/grants/a b', '/grants/grants.json'],
    ['/grants/\r\nSet-Cookie: x', '/grants/grants.json'],
    ['', '/grants/grants.json'],
  ])('%j → %s', (next, expected) => {
    expect(safeNext(next)).toBe(expected);
  });
});
