import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getAddress } from 'viem';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CHAINS_PER_MINUTE } from '../../../src/onchain/routes/chains.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { databaseKinds } from '../../helpers/databases.js';
import { chainEntry, writeDeploymentFile } from '../../helpers/onchain-deployments.js';

describe.each(databaseKinds)('GET /v2/onchain/chains on %s', (kind) => {
  let t: TestApp;
  let dir: string;
  let file: string;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'stampgate-onchain-'));
    file = join(dir, 'onchain.json');
    t = await createTestApp(kind, { ONCHAIN_CONFIG_FILE: file });
  });
  afterEach(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('lists every chain of the deployment file with EIP-55 addresses and signers, without a key, and sees a changed file', async () => {
    expect((await t.app.inject('/v2/onchain/chains')).json().code).toBe('onchain_not_configured');
    const signer = { address: '0x90f79bf6eb2c4f870365e785982e1f101e93b906', added_at: '2026-01-01T00:00:00.000Z', removed_at: '2026-02-01T00:00:00.000Z' };
    writeDeploymentFile(file, [chainEntry(10, { signers: [signer], rpc_url: 'https://secret.example/key' }), chainEntry(11155420)]);
    const res = await t.app.inject('/v2/onchain/chains');
    expect(res.statusCode).toBe(200);
    const { chains } = res.json();
    expect(chains.map((c: { chain_id: number }) => c.chain_id)).toEqual([10, 11155420]);
    const first = chainEntry(10);
    expect(chains[0]).toEqual({
      chain_id: 10,
      eas: getAddress(first.eas),
      schema_registry: getAddress(first.schema_registry),
      verifier: getAddress(first.verifier),
      resolver: getAddress(first.resolver),
      decoder: getAddress(first.decoder),
      score_schema: first.score_schema,
      score_schema_uid: first.score_schema_uid,
      passport_schema: first.passport_schema,
      passport_schema_uid: first.passport_schema_uid,
      signers: [{ ...signer, address: getAddress(signer.address) }],
    });
    // The RPC URL (it may hold a secret) is not listed.
    expect(res.body).not.toContain('secret.example');
    writeDeploymentFile(file, [chainEntry(10)]);
    expect((await t.app.inject('/v2/onchain/chains')).json().chains).toHaveLength(1);
    writeFileSync(file, '{"chains": [{"chain_id": "ten"}]}');
    const broken = await t.app.inject('/v2/onchain/chains');
    expect(broken.statusCode).toBe(503);
    expect(broken.json().code).toBe('onchain_not_configured');
    expect(broken.body).not.toContain(dir);
  });

  it('is budgeted per client address', async () => {
    writeDeploymentFile(file, [chainEntry(10)]);
    for (let i = 0; i < CHAINS_PER_MINUTE; i++) expect((await t.app.inject({ url: '/v2/onchain/chains', remoteAddress: '203.0.113.7' })).statusCode).toBe(200);
    expect((await t.app.inject({ url: '/v2/onchain/chains', remoteAddress: '203.0.113.7' })).statusCode).toBe(429);
    expect((await t.app.inject({ url: '/v2/onchain/chains', remoteAddress: '203.0.113.8' })).statusCode).toBe(200);
  });
});
