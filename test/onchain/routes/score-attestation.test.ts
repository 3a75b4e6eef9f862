import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getAddress, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { schemaStrings } from '../../../src/onchain/interface-files.js';
import { createTestApp, seedAccount, type TestApp } from '../../helpers/app.js';
import { databaseKinds } from '../../helpers/databases.js';
import { decodeSchemaData, easSdk } from '../../helpers/eas.js';
import { chainEntry, writeDeploymentFile } from '../../helpers/onchain-deployments.js';
import { giveStamps, testWallet } from '../../helpers/stamps.js';

const alice = testWallet(4101).address;
const CHAIN = 10;
const day = 86_400_000;

/** eas-sdk's own verification of an offchain attestation against a signer. */
function easVerifies(attestation: Record<string, unknown> & { domain: { verifyingContract: string; version: string; chainId: string } }, signer: string): boolean {
  const offchain = new easSdk.Offchain(
    { address: attestation.domain.verifyingContract, version: attestation.domain.version, chainId: BigInt(attestation.domain.chainId) },
    easSdk.OffchainAttestationVersion.Version2,
    undefined as never,
  );
  try {
    return offchain.verifyOffchainAttestationSignature(signer, attestation as never);
  } catch {
    return false;
  }
}

describe.each(databaseKinds)('GET /v2/stamps/{scorer_id}/score/{address}/attestation on %s', (kind) => {
  let t: TestApp;
  let dir: string;
  let file: string;
  let scorerId: number;
  let key: string;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'stampgate-onchain-'));
    file = join(dir, 'onchain.json');
    writeDeploymentFile(file, [chainEntry(CHAIN), chainEntry(11155420)]);
    t = await createTestApp(kind, { ONCHAIN_CONFIG_FILE: file });
    const account = await t.ctx.accounts.createAccount('attest');
    scorerId = (await t.ctx.accounts.createScorer(account.id, { name: 'attest', weights: { Google: '12.3456789', Discord: '8', Ens: '1.5' } })).id;
    key = (await t.ctx.apiKeys.create(account.id)).key;
  });
  afterEach(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const get = (url: string, apiKey = key) => t.app.inject({ url, headers: { 'x-api-key': apiKey } });
  const attestationUrl = (chain: number | string = CHAIN, address = alice, scorer = scorerId) => `/v2/stamps/${scorer}/score/${address}/attestation?chain_id=${chain}`;

  it('serves the recorded v2 score as an EAS offchain attestation that eas-sdk verifies against the signer', async () => {
    await giveStamps(t.ctx, alice, [{ provider: 'Google', expiresInMs: 30 * day }, 'Discord', 'Ens']);
    const before = Math.floor(Date.now() / 1000);
    const res = await get(attestationUrl());
    expect(res.statusCode).toBe(200);
    const body = res.json();
    const signer = t.ctx.onchain.signer?.address;
    expect(signer).toMatch(/^0x[0-9a-fA-F]{40}$/);
    expect(body.signer).toBe(signer);
    expect(body.uid).toBe(body.attestation.uid);
    expect(body.attestation.domain).toEqual({ name: 'EAS Attestation', version: '1.3.0', chainId: String(CHAIN), verifyingContract: getAddress(chainEntry(CHAIN).eas) });
    expect(body.attestation.primaryType).toBe('Attest');
    expect(body.attestation.version).toBe(2);
    expect(body.attestation.message).toMatchObject({ version: 2, schema: chainEntry(CHAIN).score_schema_uid, recipient: getAddress(alice), revocable: true, refUID: `0x${'0'.repeat(64)}` });
    expect(easVerifies(body.attestation, signer as string)).toBe(true);
    // Another signer does not verify it.
    expect(easVerifies(body.attestation, getAddress(testWallet(9).address))).toBe(false);

    // The score was recorded as the v2 score route records it: that route now serves the same, unchanged.
    const v2 = (await get(`/v2/stamps/${scorerId}/score/${alice}`)).json();
    expect(v2.score).toBe('21.84568');
    const fields = decodeSchemaData(schemaStrings.score, body.attestation.message.data);
    expect(fields).toEqual({
      passing_score: true,
      score_decimals: '4',
      scorer_id: String(scorerId),
      score: '218456',
      threshold: '200000',
      // Every stamp counted (none deduplicated), in the v2 object's order, × 10⁴ truncated.
      stamps: Object.keys(v2.stamps).map((provider) => ({ provider, score: ({ Discord: '80000', Ens: '15000', Google: '123456' } as Record<string, string>)[provider] })),
    });
    // Signed now; expires with the score (Google's 30 days), under the 90-day cap.
    const time = Number(body.attestation.message.time);
    expect(time).toBeGreaterThanOrEqual(before);
    expect(Number(body.attestation.message.expirationTime)).toBe(Math.floor(Date.parse(v2.expiration_timestamp) / 1000));
    expect(Number(body.attestation.message.expirationTime)).toBeLessThan(time + 90 * 86_400);
  });

  it('one changed byte of the message or the signature fails verification', async () => {
    await giveStamps(t.ctx, alice, ['Google']);
    const body = (await get(attestationUrl())).json();
    const signer = body.signer as string;
    expect(easVerifies(body.attestation, signer)).toBe(true);
    const flip = (hex: string, at: number) => `${hex.slice(0, at)}${hex[at] === '0' ? '1' : '0'}${hex.slice(at + 1)}` as Hex;
    const data = body.attestation.message.data as string;
    const tamperedData = structuredClone(body.attestation);
    tamperedData.message.data = flip(data, data.length - 1);
    expect(easVerifies(tamperedData, signer)).toBe(false);
    const tamperedSignature = structuredClone(body.attestation);
    tamperedSignature.signature.s = flip(tamperedSignature.signature.s, 20);
    expect(easVerifies(tamperedSignature, signer)).toBe(false);
    const otherChain = structuredClone(body.attestation);
    otherChain.domain.chainId = '11155420';
    expect(easVerifies(otherChain, signer)).toBe(false);
  });

  it('the same chain signs for its own EAS: the second chain of the file', async () => {
    await giveStamps(t.ctx, alice, ['Google']);
    const body = (await get(attestationUrl(11155420))).json();
    expect(body.attestation.domain.chainId).toBe('11155420');
    expect(body.attestation.message.schema).toBe(chainEntry(11155420).score_schema_uid);
    expect(easVerifies(body.attestation, body.signer)).toBe(true);
  });

  it('refuses an unknown chain (404), a missing or bad chain_id (400), another account\'s scorer (404) and a key without read_scores (403)', async () => {
    const unknown = await get(attestationUrl(999));
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().code).toBe('chain_not_found');
    const missing = await get(`/v2/stamps/${scorerId}/score/${alice}/attestation`);
    expect(missing.statusCode).toBe(400);
    expect((await get(attestationUrl('ten'))).statusCode).toBe(400);
    const other = await seedAccount(t.ctx);
    const foreign = await get(attestationUrl(CHAIN, alice, other.scorer.id));
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json().code).toBe('scorer_not_found');
    const account = await t.ctx.accounts.createAccount('no reads');
    const writer = (await t.ctx.apiKeys.create(account.id, { permissions: ['submit_passports'] })).key;
    const denied = await get(attestationUrl(), writer);
    expect(denied.statusCode).toBe(403);
    expect(denied.json().code).toBe('permission_denied');
    // Nothing was recorded for the refused requests.
    expect((await t.ctx.v2.events.scoreAt(t.ctx.database.db, other.scorer.id, alice, Date.now() + day)) ?? null).toBeNull();
  });

  it('without a deployment file answers 503 onchain_not_configured', async () => {
    rmSync(file);
    const res = await get(attestationUrl());
    expect(res.statusCode).toBe(503);
    expect(res.json().code).toBe('onchain_not_configured');
  });
});

describe('GET …/attestation in production without ATTESTATION_SIGNER_KEY', () => {
  it('answers 503 onchain_not_configured, and a production key signs', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'stampgate-onchain-'));
    const file = join(dir, 'onchain.json');
    writeDeploymentFile(file, [chainEntry(CHAIN)]);
    const unconfigured = await createTestApp('sqlite', { STAMPGATE_ENV: 'production', PUBLIC_BASE_URL: 'https://stampgate.example', ONCHAIN_CONFIG_FILE: file });
    const signerKey = `0x${'5a'.repeat(32)}`;
    const configured = await createTestApp('sqlite', { STAMPGATE_ENV: 'production', PUBLIC_BASE_URL: 'https://stampgate.example', ONCHAIN_CONFIG_FILE: file, ATTESTATION_SIGNER_KEY: signerKey });
    try {
      expect(unconfigured.ctx.onchain.signer).toBeNull();
      const { scorer, key } = await seedAccount(unconfigured.ctx);
      const res = await unconfigured.app.inject({ url: `/v2/stamps/${scorer.id}/score/${alice}/attestation?chain_id=${CHAIN}`, headers: { 'x-api-key': key } });
      expect(res.statusCode).toBe(503);
      expect(res.json().code).toBe('onchain_not_configured');
      expect(configured.ctx.onchain.signer?.address).toBe(privateKeyToAccount(signerKey as Hex).address);
    } finally {
      await unconfigured.close();
      await configured.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
