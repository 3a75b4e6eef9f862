/** examples/verify-offchain-score/verify.ts, run as its own process against a real listening server. */
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { databaseKinds } from '../helpers/databases.js';
import { chainEntry, writeDeploymentFile } from '../helpers/onchain-deployments.js';
import { giveStamps, testWallet } from '../helpers/stamps.js';
import { RunningExample } from './run-example.js';

const alice = testWallet(7101).address;

describe.each(databaseKinds)('verify-offchain-score example on %s', (kind) => {
  let t: TestApp;
  let dir: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'stampgate-onchain-'));
    const file = join(dir, 'onchain.json');
    t = await createTestApp(kind, { ONCHAIN_CONFIG_FILE: file });
    const signer = t.ctx.onchain.signer!.address;
    writeDeploymentFile(file, [chainEntry(10, { signers: [{ address: signer, added_at: new Date(Date.now() - 60_000).toISOString(), removed_at: null }] }), chainEntry(11)]);
    const account = await t.ctx.accounts.createAccount('example');
    const scorer = await t.ctx.accounts.createScorer(account.id, { name: 'example', weights: { Google: '21.5' } });
    const { key } = await t.ctx.apiKeys.create(account.id);
    await giveStamps(t.ctx, alice, ['Google']);
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    env = { BASE_URL: `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`, API_KEY: key, SCORER_ID: String(scorer.id), ADDRESS: alice };
  });
  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('verifies the served attestation against the listed signer', async () => {
    const example = new RunningExample('verify-offchain-score/verify', { ...env, CHAIN_ID: '10' });
    const { input: line } = await example.line(/^verified /);
    expect(line).toContain('scored 21.5 (threshold 20), passing true');
    expect(await example.exited).toBe(0);
  });

  it('refuses it when the chain lists no signer', async () => {
    const example = new RunningExample('verify-offchain-score/verify', { ...env, CHAIN_ID: '11' });
    const { input: line } = await example.line(/^refused: /);
    expect(line).toContain('not a trusted signer');
    expect(await example.exited).toBe(1);
  });
});
