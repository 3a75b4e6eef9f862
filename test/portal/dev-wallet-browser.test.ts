import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEV_WALLET_KEY_FILE } from '../../src/portal/dev-wallet.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { databaseKinds } from '../helpers/databases.js';

/**
 * The portal without a wallet extension: a development server offers its test wallet (its key
 * kept in DATA_DIR) and the sign-in reaches the account pages in Debian's headless Chromium; a
 * production server neither offers nor accepts it.
 */

declare const window: any;

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const poll = <T>(read: () => T | Promise<T>) => expect.poll(read, { interval: 50, timeout: 15_000 });
const assetsDir = mkdtempSync(join(tmpdir(), 'stampgate-portal-ui-'));
const haveBrowser = existsSync(CHROMIUM) || process.env.CI === 'true';
if (!haveBrowser) console.warn(`No Chromium at ${CHROMIUM}: the dev wallet browser tests are skipped (apt-get install chromium, or set CHROMIUM_PATH).`);
let browser: Browser;

async function listening(t: TestApp): Promise<string> {
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`;
}

describe.skipIf(!haveBrowser)('the development test wallet in Chromium', () => {
  beforeAll(async () => {
    execFileSync(process.execPath, ['node_modules/vite/bin/vite.js', 'build', '--config', 'portal/vite.config.ts'], {
      env: { ...process.env, PORTAL_OUT_DIR: assetsDir },
      stdio: 'pipe',
    });
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    rmSync(assetsDir, { recursive: true, force: true });
  });

  describe.each(databaseKinds)('on %s', (kind) => {
    it('signs a browser with no wallet extension in on a development server, reaching the account pages', async () => {
      const t = await createTestApp(kind, { PORTAL_ASSETS_DIR: assetsDir });
      const context = await browser.newContext();
      try {
        const base = await listening(t);
        const page = await context.newPage();
        await page.goto(`${base}/portal/`);
        await poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Sign in');
        expect(await page.evaluate(() => window.ethereum)).toBeUndefined();
        const note = page.getByRole('note');
        await poll(() => note.textContent()).toMatch(/development test wallet 0x[0-9a-f]{40}/);
        await page.getByRole('button', { name: 'Sign in with the development test wallet' }).click();
        await poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Scorers');
        const address = (await t.app.inject('/v2/account/dev-wallet')).json().address as string;
        expect(await page.locator('.address').getAttribute('title')).toBe(address);
        // The key lives in DATA_DIR, readable by the server's user only.
        const keyFile = join(t.ctx.config.dataDir, DEV_WALLET_KEY_FILE);
        expect(statSync(keyFile).mode & 0o777).toBe(0o600);
      } finally {
        await context.close();
        await t.close();
      }
    }, 60_000);

    it('neither offers nor accepts it on a production server', async () => {
      const t = await createTestApp(kind, { PORTAL_ASSETS_DIR: assetsDir, STAMPGATE_ENV: 'production', PUBLIC_BASE_URL: 'http://127.0.0.1', HOST: '127.0.0.1' });
      const context = await browser.newContext();
      try {
        const base = await listening(t);
        const page = await context.newPage();
        await page.goto(`${base}/portal/`);
        await poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Sign in');
        await poll(() => page.getByRole('button', { name: 'Sign in with Ethereum' }).count()).toBe(1);
        expect(await page.getByRole('button', { name: 'Sign in with the development test wallet' }).count()).toBe(0);
        // Asked directly, from the page, the server refuses and opens no session.
        const refused = await page.evaluate(async () => {
          const response = await window.fetch('/v2/account/dev-wallet/session', { method: 'POST' });
          return { status: response.status, body: await response.json(), cookie: response.headers.get('set-cookie') };
        });
        expect(refused).toEqual({ status: 403, body: { detail: expect.stringContaining('development'), code: 'permission_denied' }, cookie: null });
        expect((await t.app.inject('/v2/account/session')).statusCode).toBe(401);
        expect(existsSync(join(t.ctx.config.dataDir, DEV_WALLET_KEY_FILE))).toBe(false);
      } finally {
        await context.close();
        await t.close();
      }
    }, 60_000);
  });
});
