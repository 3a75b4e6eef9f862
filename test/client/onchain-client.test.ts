/**
 * verifyScoreAttestation and readOnchainScore of @stampgate/client against the real server's
 * offchain attestation, and the decoder's getScore read through a real EVM.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AttestationVerificationError, PASSPORT_SCHEMA, readOnchainScore, SCORE_SCHEMA, VERIFIER_EIP712, verifyScoreAttestation, type OffchainScoreAttestation } from '@stampgate/client';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { databaseKinds } from '../helpers/databases.js';
import { type Anvil, freePort, startAnvil } from '../helpers/evm.js';
import { chainEntry, decoderStandInArtifact, writeDeploymentFile } from '../helpers/onchain-deployments.js';
import { giveStamps, testWallet } from '../helpers/stamps.js';

const alice = testWallet(6101).address;
const day = 86_400_000;

describe('the client\'s copies of the shipped interface files', () => {
  it('equal contracts/abi/*.json', () => {
    const schemas = JSON.parse(readFileSync(new URL('../../contracts/abi/schemas.json', import.meta.url), 'utf8'));
    expect([SCORE_SCHEMA, PASSPORT_SCHEMA]).toEqual([schemas.score, schemas.passport]);
    expect(JSON.parse(JSON.stringify(VERIFIER_EIP712))).toEqual(JSON.parse(readFileSync(new URL('../../contracts/abi/verifier-eip712.json', import.meta.url), 'utf8')));
  });
});

describe.each(databaseKinds)('verifyScoreAttestation against the server on %s', (kind) => {
  let t: TestApp;
  let dir: string;
  let key: string;
  let scorerId: number;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'stampgate-onchain-'));
    const file = join(dir, 'onchain.json');
    t = await createTestApp(kind, { ONCHAIN_CONFIG_FILE: file });
    writeDeploymentFile(file, [chainEntry(10, { signers: [{ address: t.ctx.onchain.signer!.address, added_at: new Date(Date.now() - day).toISOString(), removed_at: null }] })]);
    const account = await t.ctx.accounts.createAccount('client');
    scorerId = (await t.ctx.accounts.createScorer(account.id, { name: 'client', weights: { Google: '12.3456789', Discord: '8' } })).id;
    key = (await t.ctx.apiKeys.create(account.id)).key;
    await giveStamps(t.ctx, alice, [{ provider: 'Google', expiresInMs: 10 * day }, 'Discord']);
  });
  afterEach(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function served(): Promise<{ attestation: OffchainScoreAttestation; signer: string }> {
    const res = await t.app.inject({ url: `/v2/stamps/${scorerId}/score/${alice}/attestation?chain_id=10`, headers: { 'x-api-key': key } });
    expect(res.statusCode).toBe(200);
    return res.json();
  }

  it('verifies against the chains listing\'s signers and returns the decoded score', async () => {
    const { attestation } = await served();
    const { chains } = (await t.app.inject('/v2/onchain/chains')).json();
    const verified = await verifyScoreAttestation(attestation, chains[0].signers);
    expect(verified).toMatchObject({ signer: t.ctx.onchain.signer!.address, chainId: 10, passing_score: true, score_decimals: 4, scorer_id: BigInt(scorerId), score: 203456, threshold: 200000 });
    expect(verified.stamps).toEqual([
      { provider: 'Discord', score: 80000n },
      { provider: 'Google', score: 123456n },
    ]);
    expect(verified.uid).toBe(attestation.uid);
  });

  it('refuses an untrusted or removed signer, a changed byte, a wrong UID and an expired attestation', async () => {
    const { attestation, signer } = await served();
    const refused = async (a: OffchainScoreAttestation, signers: Parameters<typeof verifyScoreAttestation>[1] = [signer], now?: number) => {
      const error = await verifyScoreAttestation(a, signers, { now }).then(() => null, (e: unknown) => e);
      expect(error).toBeInstanceOf(AttestationVerificationError);
    };
    await refused(attestation, [testWallet(1).address]);
    await refused(attestation, [{ address: signer, added_at: new Date(Date.now() - 2 * day).toISOString(), removed_at: new Date(Date.now() - day).toISOString() }]);
    const tampered = structuredClone(attestation);
    tampered.message.data = `${tampered.message.data.slice(0, -1)}${tampered.message.data.endsWith('0') ? '1' : '0'}`;
    await refused(tampered);
    // The UID recomputed too: a consistent UID with a changed message still fails the signature.
    tampered.uid = (await import('@stampgate/client')).offchainAttestationUid(tampered.message);
    await refused(tampered);
    const wrongUid = structuredClone(attestation);
    wrongUid.uid = `0x${'1'.repeat(64)}`;
    await refused(wrongUid);
    await refused(attestation, [signer], Date.now() + 11 * day);
    // And the untouched one passes with a plain address list.
    expect((await verifyScoreAttestation(attestation, [signer.toLowerCase()])).score).toBe(203456);
  });
});

describe('readOnchainScore', () => {
  let anvil: Anvil;
  beforeAll(async () => {
    anvil = await startAnvil();
  }, 60_000);
  afterAll(async () => anvil?.stop());

  it('reads the decoder\'s getScore over RPC; an endpoint that is down rejects', async () => {
    const artifact = decoderStandInArtifact();
    const { address: decoder } = await anvil.deploy(anvil.wallets[0]!, artifact);
    await anvil.write(anvil.wallets[0]!, decoder, artifact.abi, 'set', [217_540n, 1_800_000_000n]);
    expect(await readOnchainScore({ rpcUrl: anvil.url, decoder, scorerId: 3, address: alice })).toEqual({
      score: 217_540n,
      passing: true,
      time: 1_800_000_000n,
      expirationTime: 1_800_086_400n,
    });
    const closed = `http://127.0.0.1:${await freePort()}`;
    await expect(readOnchainScore({ rpcUrl: closed, decoder, scorerId: 3, address: alice })).rejects.toThrow();
  });
});
