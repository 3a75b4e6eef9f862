import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { type Browser, chromium } from 'playwright-core';
import type { Address, Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChainDeployment } from '../../src/onchain/deployment-file.js';
import { createTestApp } from '../helpers/app.js';
import { databaseKinds } from '../helpers/databases.js';
import { freePort } from '../helpers/evm.js';
import { type DeployedChain, startDeployedChain, temporaryDeploymentFile } from '../helpers/onchain-chain.js';
import { chainEntry } from '../helpers/onchain-deployments.js';
import { giveStamps, testWallet } from '../helpers/stamps.js';

/**
 * The portal's address lookup beside the chains, in Debian's headless Chromium: an address whose
 * score the service signed and another account submitted to the real verifier on one anvil chain
 * shows that chain's onchain score next to the stored one; a second, empty chain shows "not
 * attested", and a chain whose RPC endpoint is down shows "chain unreachable".
 */

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const poll = <T>(read: () => T | Promise<T>) => expect.poll(read, { interval: 50, timeout: 15_000 });
const assetsDir = mkdtempSync(join(tmpdir(), 'stampgate-portal-ui-'));
const haveBrowser = existsSync(CHROMIUM) || process.env.CI === 'true';
if (!haveBrowser) console.warn(`No Chromium at ${CHROMIUM}: the onchain lookup browser tests are skipped (apt-get install chromium, or set CHROMIUM_PATH).`);

interface ServedRequest {
  request: { recipient: Address; attestations: { schema: Hex; expirationTime: string; data: Hex }[]; nonce: string; deadline: string; fee: string };
  signature: { v: number; r: Hex; s: Hex };
}

describe.skipIf(!haveBrowser)('the address lookup\'s onchain scores in Chromium', () => {
  const signerKey = generatePrivateKey();
  const deployed = temporaryDeploymentFile();
  const served = join(dirname(deployed), 'served.json');
  let browser: Browser;
  let attested: DeployedChain;
  let empty: DeployedChain;

  beforeAll(async () => {
    execFileSync(process.execPath, ['node_modules/vite/bin/vite.js', 'build', '--config', 'portal/vite.config.ts'], {
      env: { ...process.env, PORTAL_OUT_DIR: assetsDir },
      stdio: 'pipe',
    });
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
    attested = await startDeployedChain(31337, privateKeyToAccount(signerKey), deployed);
    empty = await startDeployedChain(31338, privateKeyToAccount(signerKey), deployed);
    // A third chain in the file whose endpoint nobody answers.
    const { chains } = JSON.parse(readFileSync(deployed, 'utf8')) as { chains: ChainDeployment[] };
    const down = chainEntry(31339, { rpc_url: `http://127.0.0.1:${await freePort()}` });
    writeFileSync(served, JSON.stringify({ chains: [...chains, down] }));
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await attested?.anvil.stop();
    await empty?.anvil.stop();
    rmSync(assetsDir, { recursive: true, force: true });
    rmSync(dirname(deployed), { recursive: true, force: true });
  });

  describe.each(databaseKinds.map((kind, index) => [kind, index] as const))('on %s', (kind, index) => {
    it('looks up an attested address and sees each chain\'s onchain score beside the stored one', async () => {
      const t = await createTestApp(kind, { PORTAL_ASSETS_DIR: assetsDir, ONCHAIN_CONFIG_FILE: served, ATTESTATION_SIGNER_KEY: signerKey, OUTBOUND_TIMEOUT_MS: '1000' });
      const context = await browser.newContext();
      const problems: string[] = [];
      try {
        await t.app.listen({ port: 0, host: '127.0.0.1' });
        const base = `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`;
        const page = await context.newPage();
        page.on('pageerror', (error) => problems.push(error.message));
        await page.goto(`${base}/portal/`);
        await page.getByRole('button', { name: 'Sign in with the development test wallet' }).click();
        await poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Scorers');

        // The account's scorer, and the address's score put on chain 31337 by the wallet's path.
        const owner = (await t.app.inject('/v2/account/dev-wallet')).json().address as string;
        const account = (await t.ctx.accounts.accountOfOwner(owner.toLowerCase()))!;
        const scorer = await t.ctx.accounts.createScorer(account.id, { name: 'Onchain gate', weights: { Google: '12.3456789', Discord: '8' } });
        const key = (await t.ctx.apiKeys.create(account.id)).key;
        const holder = testWallet(0x0c1a + index);
        await giveStamps(t.ctx, holder.address, ['Google', 'Discord']);
        const res = await t.app.inject({ method: 'POST', url: '/v2/onchain/31337/attestations', headers: { 'x-api-key': key }, payload: { address: holder.address, scorer_id: scorer.id } });
        expect(res.statusCode, res.body).toBe(200);
        const { request, signature } = res.json() as ServedRequest;
        const hash = await attested.submit(
          {
            ...request,
            attestations: request.attestations.map((a) => ({ ...a, expirationTime: BigInt(a.expirationTime) })),
            nonce: BigInt(request.nonce),
            deadline: BigInt(request.deadline),
            fee: BigInt(request.fee),
          },
          signature,
        );
        const { blockNumber } = await attested.anvil.publicClient.getTransactionReceipt({ hash });
        const attestedAt = (await attested.anvil.publicClient.getBlock({ blockNumber })).timestamp;

        await page.getByRole('navigation', { name: 'Portal sections' }).getByRole('link', { name: 'Address lookup' }).click();
        await poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Address lookup');
        await poll(() => page.getByLabel('Scorer').locator('option').count()).toBe(1);
        await page.getByRole('textbox', { name: 'Address', exact: true }).fill(holder.account.address);
        await page.getByRole('button', { name: 'Look up' }).click();
        await poll(() => page.getByTestId('score').textContent()).toBe('20.34568');

        const table = page.getByRole('table', { name: 'Onchain scores (3 chains)' });
        await poll(() => table.getByRole('row').count()).toBe(4);
        const cells = (chainId: number) => table.getByRole('row').filter({ has: page.getByRole('cell', { name: String(chainId), exact: true }) }).getByRole('cell').allTextContents();
        // The chain holds the score in units of 10^-4, truncated: 20.3456.
        const iso = (seconds: bigint | string) => new Date(Number(seconds) * 1000).toISOString().replace('Z', '+00:00');
        expect(await cells(31337)).toEqual([
          '31337',
          '20.34560',
          'yes',
          iso(attestedAt),
          iso(request.attestations[0]!.expirationTime),
        ]);
        expect(await cells(31338)).toEqual(['31338', 'not attested']);
        expect(await cells(31339)).toEqual(['31339', 'chain unreachable']);
        expect(problems).toEqual([]);
      } finally {
        await context.close();
        await t.close();
      }
    }, 90_000);
  });
});
