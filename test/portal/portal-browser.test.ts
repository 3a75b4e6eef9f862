import { execFileSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import type { Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { databaseKinds } from '../helpers/databases.js';
import { giveStamps, testWallet } from '../helpers/stamps.js';

/**
 * The developer portal end to end in Debian's Chromium (headless, driven by playwright-core):
 * a test wallet (EIP-1193, a viem account) injected into the page signs in, creates a scorer
 * and a key, copies the key, uses it to submit an address, and sees the usage chart move.
 * The sqlite run saves a screenshot of every page at a phone and a desktop size: in a temporary folder, or in
 * PORTAL_SCREENSHOTS_DIR (`PORTAL_SCREENSHOTS_DIR=docs/portal` refreshes the README's pictures), so that a test
 * run leaves the checkout as it was.
 */

// Functions passed to page.evaluate run in the page, where these exist; this file is typed for Node.
declare const window: any, document: any, navigator: any;

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const wallet = testWallet(0xa11ce);
const someone = testWallet(0xb0b);
const phone = { width: 390, height: 844 };
/** expect.poll with room for a busy CI machine (its default gives up after a second). */
const poll = <T>(read: () => T | Promise<T>, options: { timeout?: number } = {}) => expect.poll(read, { interval: 50, timeout: 15_000, ...options });
const desktop = { width: 1280, height: 860 };
const screenshotDir = process.env.PORTAL_SCREENSHOTS_DIR ? resolve(process.env.PORTAL_SCREENSHOTS_DIR) : mkdtempSync(join(tmpdir(), 'stampgate-portal-shots-'));
const assetsDir = mkdtempSync(join(tmpdir(), 'stampgate-portal-ui-'));
let browser: Browser;
// Under CI the browser is mandatory (.ci/run installs it); a local run without it says so and skips.
const haveBrowser = existsSync(CHROMIUM) || process.env.CI === 'true';
if (!haveBrowser) console.warn(`No Chromium at ${CHROMIUM}: the portal browser tests are skipped (apt-get install chromium, or set CHROMIUM_PATH).`);

describe.skipIf(!haveBrowser)('developer portal in Chromium', () => {
  beforeAll(() => {
    // The page under test is built from this checkout's portal/ sources, never a stale build.
    execFileSync(process.execPath, ['node_modules/vite/bin/vite.js', 'build', '--config', 'portal/vite.config.ts'], {
      env: { ...process.env, PORTAL_OUT_DIR: assetsDir },
      stdio: 'pipe',
    });
  }, 120_000);
  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    rmSync(assetsDir, { recursive: true, force: true });
    if (!process.env.PORTAL_SCREENSHOTS_DIR) rmSync(screenshotDir, { recursive: true, force: true });
  });

  /**
   * Submits with the typed client package (`@stampgate/client`) when this checkout has it (it lands
   * from another branch), else with plain fetch; counts the HTTP requests either way made.
   */
  async function submitWithKey(base: string, apiKey: string, scorerId: number, address: string): Promise<{ status: string; requests: number }> {
    let requests = 0;
    const counted: typeof fetch = (input, init) => {
      requests++;
      return fetch(input, init);
    };
    const client = (await import('@stampgate/client' as string).catch(() => null)) as {
      createClient(options: { baseUrl: string; apiKey: string; fetch: typeof fetch }): { submitAndWait(scorer: number, address: string): Promise<{ status: string }> };
    } | null;
    if (client) {
      const record = await client.createClient({ baseUrl: base, apiKey, fetch: counted }).submitAndWait(scorerId, address);
      return { status: record.status, requests };
    }
    const response = await counted(`${base}/registry/submit-passport`, {
      method: 'POST',
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ address, scorer_id: String(scorerId) }),
    });
    expect(response.status).toBe(200);
    return { status: ((await response.json()) as { status: string }).status, requests };
  }

  /** window.ethereum backed by the viem account of `wallet`: accounts, chain id and personal_sign. */
  async function injectWallet(context: BrowserContext): Promise<void> {
    await context.exposeFunction('__testWalletSign', async (data: Hex, from: string) => {
      if (from.toLowerCase() !== wallet.address) throw new Error(`personal_sign for ${from}, which is not this wallet`);
      return wallet.account.signMessage({ message: { raw: data } });
    });
    await context.addInitScript((address: string) => {
      const w = window as unknown as { ethereum: unknown; __testWalletSign(data: string, from: string): Promise<string> };
      w.ethereum = {
        isTestWallet: true,
        async request({ method, params }: { method: string; params?: unknown[] }) {
          if (method === 'eth_requestAccounts' || method === 'eth_accounts') return [address];
          if (method === 'eth_chainId') return '0xa';
          if (method === 'personal_sign') return w.__testWalletSign(params![0] as string, params![1] as string);
          throw Object.assign(new Error(`The test wallet does not support ${method}.`), { code: 4200 });
        },
      };
    }, wallet.account.address);
  }

  describe.each(databaseKinds)('developer portal in Chromium on %s', (kind) => {
    let t: TestApp;
    let base: string;
    let context: BrowserContext;
    let page: Page;
    const problems: string[] = [];
    const screenshots = kind === 'sqlite';
    // A webhook receiver that fails the first delivery (500) and takes the rest (204).
    const answered: number[] = [];
    let receiver: Server;
    let receiverUrl: string;

    beforeAll(async () => {
      t = await createTestApp(kind, { PORTAL_ASSETS_DIR: assetsDir, USAGE_FLUSH_MS: '200', SIWE_ALLOWED_CHAIN_IDS: '1,10', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' });
      t.ctx.worker.start();
      await giveStamps(t.ctx, someone.address, ['Google', 'Discord']);
      t.ctx.webhooks.worker.start();
      await t.app.listen({ port: 0, host: '127.0.0.1' });
      const address = t.app.server.address() as { port: number };
      base = `http://127.0.0.1:${address.port}`;
      receiver = createServer((request, response) => {
        request.resume();
        request.on('end', () => {
          const status = answered.length === 0 ? 500 : 204;
          answered.push(status);
          response.writeHead(status).end();
        });
      });
      await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
      receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hooks`;
      context = await browser.newContext({ viewport: desktop });
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
      await injectWallet(context);
      page = await context.newPage();
      // A CSP violation, a failed script or an uncaught error shows up here.
      page.on('console', (message) => {
        if (message.type() === 'error' && !/status of 4\d\d/.test(message.text())) problems.push(message.text());
      });
      page.on('pageerror', (error) => problems.push(error.message));
    }, 60_000);
    afterAll(async () => {
      await context?.close();
      await t?.close();
      receiver?.close();
    });

    /** Screenshots of the current page at both sizes; checks the phone size needs no sideways scrolling. */
    async function capture(name: string): Promise<void> {
      await page.setViewportSize(phone);
      const wide = await page.evaluate(() => {
        const limit = document.documentElement.clientWidth;
        return [...document.querySelectorAll('body *')]
          .filter((el) => el.getBoundingClientRect().right > limit + 0.5 && !el.closest('.table-wrap'))
          .map((el) => `${el.tagName.toLowerCase()}.${el.className}`);
      });
      expect(wide, `${name}: elements past the right edge of a phone`).toEqual([]);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      expect(overflow, `${name} scrolls sideways on a phone`).toBeLessThanOrEqual(0);
      if (screenshots) {
        mkdirSync(screenshotDir, { recursive: true });
        await page.screenshot({ path: join(screenshotDir, `${name}-phone.png`), fullPage: true });
        expect(statSync(join(screenshotDir, `${name}-phone.png`)).size, `${name}: phone screenshot`).toBeGreaterThan(1000);
      }
      await page.setViewportSize(desktop);
      if (screenshots) await page.screenshot({ path: join(screenshotDir, `${name}-desktop.png`), fullPage: true });
    }

    /** Every form control has an accessible name (a label or aria-label). */
    async function unlabelledControls(): Promise<string[]> {
      return page.evaluate(() =>
        [...document.querySelectorAll('input, select, button, textarea')]
          .filter((el) => {
            const labelled = el.closest('label') !== null || el.getAttribute('aria-label') || (el.id && document.querySelector(`label[for="${el.id}"]`));
            return !labelled && !(el.tagName === 'BUTTON' && el.textContent?.trim());
          })
          .map((el) => el.outerHTML.slice(0, 80)),
      );
    }

    async function visit(name: string): Promise<void> {
      await page.getByRole('navigation', { name: 'Portal sections' }).getByRole('link', { name }).click();
      await poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe(name);
      expect(await unlabelledControls()).toEqual([]);
    }

    it('signs in with the wallet, creates a scorer and a key, uses the key, and sees the usage chart move', async () => {
      const response = await page.goto(`${base}/portal/`);
      expect(response?.headers()['content-security-policy']).toContain("script-src 'self'");
      await poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Sign in');
      // Keyboard: the first Tab reaches the skip link, and the sign-in button works from the keyboard.
      await page.keyboard.press('Tab');
      expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content');
      await page.evaluate(() => document.activeElement?.blur());
      await capture('sign-in');
      await page.getByRole('button', { name: 'Sign in with Ethereum' }).focus();
      const signInRequest = page.waitForRequest((request) => request.url().endsWith('/v2/account/session') && request.method() === 'POST');
      await page.keyboard.press('Enter');
      // The wallet is on chain 10 (Optimism), which the server accepts: the message names it.
      expect((await signInRequest).postDataJSON().message).toContain('\nChain ID: 10\n');
      await poll(() => page.getByRole('heading', { level: 1 }).textContent(), { timeout: 15_000 }).toBe('Scorers');
      const account = await t.ctx.accounts.accountOfOwner(wallet.address);
      expect(account).not.toBeNull();
      // The operator grants the account tier 2 (a key of that tier): the page's own requests, which
      // spend the account's budget, then leave the tier-1 key made below its own 125 measured whole.
      await t.ctx.apiKeys.create(account!.id, { tier: 2, name: 'granted' });

      // A scorer: binary, threshold 15, one weight override.
      await page.getByLabel('Name').fill('Airdrop gate');
      await page.getByLabel('Type').selectOption('binary');
      await page.getByLabel('Threshold').fill('15');
      await page.getByRole('button', { name: 'Add override' }).click();
      await page.getByLabel('Provider').fill('Google');
      await page.getByLabel('Weight', { exact: true }).fill('2.5');
      await page.getByRole('button', { name: 'Create scorer' }).click();
      await poll(() => page.getByRole('status').textContent()).toMatch(/^Created scorer \d+ \(Airdrop gate\)\.$/);
      const [scorer] = await t.ctx.accounts.listScorers(account!.id);
      expect(scorer).toMatchObject({ name: 'Airdrop gate', type: 'binary', threshold: '15', weights: { Google: '2.5' } });
      await capture('scorers');

      // A webhook on the scorer (before anything is scored, so the first score's event reaches it).
      await visit('Webhooks');
      await page.getByLabel('Endpoint URL').fill(receiverUrl);
      await page.getByRole('button', { name: 'Create webhook' }).click();
      await poll(() => page.getByRole('status').textContent()).toMatch(/^Webhook \d+ created\./);
      expect(await page.getByRole('textbox', { name: 'Secret (shown once)' }).inputValue()).toMatch(/^whsec_/);

      // Usage before the key is used: nothing.
      await visit('Usage');
      await poll(() => page.locator('svg[data-total]').getAttribute('data-total')).toBe('0');

      // A key, shown once, copied to the clipboard.
      await visit('API keys');
      await page.getByLabel('Label').fill('backend');
      await page.getByRole('button', { name: 'Create key' }).click();
      const shown = await page.getByRole('textbox', { name: 'API key' }).inputValue();
      expect(shown).toMatch(/^[a-z0-9]{8}\.[A-Za-z0-9_-]{43}$/);
      await page.getByRole('button', { name: 'Copy key' }).click();
      await poll(() => page.getByRole('status').textContent()).toBe('Key copied to the clipboard.');
      const copied = await page.evaluate(() => navigator.clipboard.readText());
      expect(copied).toBe(shown);
      await capture('keys');

      // The integrator's side: the copied key submits an address, then reads until its budget (125 per window, tier 1) runs out.
      const { status: scored, requests: submitRequests } = await submitWithKey(base, copied, scorer!.id, someone.account.address);
      expect(scored).toBe('DONE');
      const headers = { 'x-api-key': copied };
      const statuses: number[] = [];
      for (let i = 0; i < 127; i++) statuses.push((await fetch(`${base}/registry/score/${scorer!.id}/${someone.address}`, { headers })).status);
      const total = submitRequests + statuses.length;
      expect(statuses.filter((s) => s === 429).length).toBe(total - 125);

      // The chart moves: every request of the key, the refused ones apart.
      await visit('Usage');
      await page.getByRole('button', { name: 'Refresh' }).click();
      await poll(() => page.locator('svg[data-total]').getAttribute('data-total')).toBe(String(total));
      expect(await page.locator('svg[data-total]').getAttribute('data-limited')).toBe(String(total - 125));
      await capture('usage');

      // The address lookup scores it now (v2) and shows its stamps' weights. Binary scorer, threshold 15:
      // Google (overridden to 2.5) and Discord (catalogue 0.516) count, 3.016 in all, not passing.
      await visit('Address lookup');
      await page.getByRole('textbox', { name: 'Address', exact: true }).fill(someone.account.address);
      await page.getByRole('button', { name: 'Look up' }).click();
      await poll(() => page.getByTestId('score').textContent()).toBe('3.01600');
      expect(await page.getByTestId('passing').textContent()).toBe('no (threshold 15.00000)');
      expect(await page.getByRole('row').filter({ hasText: 'Google' }).getByRole('cell').nth(1).textContent()).toBe('2.50000');
      expect(await page.getByRole('caption').filter({ hasText: 'Stamps' }).textContent()).toBe('Stamps (2)');
      // This server deploys no chain: the lookup says so in place of the per-chain rows.
      expect(await page.getByTestId('onchain-none').textContent()).toBe('Onchain: no chain is deployed on this server.');
      await capture('lookup');

      // The delivery log shows the refused delivery; a retry from the page is delivered.
      await visit('Webhooks');
      const cellsOf = async (text: string) => {
        await page.getByRole('button', { name: 'Delivery log' }).click();
        return page.getByRole('cell', { name: text, exact: true }).count();
      };
      await poll(() => cellsOf('500'), { timeout: 30_000 }).toBeGreaterThan(0);
      await page.getByRole('button', { name: /^Retry delivery \d+$/ }).first().click();
      await poll(() => page.getByRole('status').textContent()).toMatch(/^Delivery \d+ queued again\.$/);
      await poll(() => cellsOf('204'), { timeout: 30_000 }).toBeGreaterThan(0);
      expect(answered.slice(0, 2)).toEqual([500, 204]);
      await page.waitForLoadState('networkidle');
      await capture('webhooks');

      await page.getByRole('button', { name: 'Sign out' }).click();
      await poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Sign in');

      // A session that ends on the server (expired, signed out elsewhere) sends the page back to sign-in.
      await page.getByRole('button', { name: 'Sign in with Ethereum' }).click();
      await poll(() => page.getByRole('navigation', { name: 'Portal sections' }).count()).toBe(1);
      await page.waitForLoadState('networkidle');
      await t.ctx.database.db.deleteFrom('portal_sessions').execute();
      await page.evaluate(() => {
        window.location.hash = '#/keys';
      });
      await poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Sign in');
      expect(problems).toEqual([]);
    }, 180_000);
  });
});
