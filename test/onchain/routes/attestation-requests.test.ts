import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Address, getAddress, type Hex, verifyTypedData } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { createSiweMessage } from 'viem/siwe';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import verifierEip712 from '../../../contracts/abi/verifier-eip712.json' with { type: 'json' };
import type { ChainDeployment } from '../../../src/onchain/deployment-file.js';
import { schemaStrings } from '../../../src/onchain/interface-files.js';
import { createTestApp, seedAccount, type TestApp } from '../../helpers/app.js';
import { databaseKinds } from '../../helpers/databases.js';
import { decodeSchemaData } from '../../helpers/eas.js';
import { type Anvil, freePort } from '../../helpers/evm.js';
import { type DeployedChain, startDeployedChain, temporaryDeploymentFile, verifierAbi } from '../../helpers/onchain-chain.js';
import { chainEntry, writeDeploymentFile } from '../../helpers/onchain-deployments.js';
import { startRpcProbe } from '../../helpers/rpc-probe.js';
import { giveStamps, testWallet } from '../../helpers/stamps.js';

const alice = testWallet(5101);
const bob = testWallet(5102);
const day = 86_400_000;

describe.each(databaseKinds)('POST /v2/onchain/{chain_id}/attestations on %s', (kind) => {
  // The real contracts, deployed as `stampgate onchain deploy` does, with the service's key as the signer.
  const signerKey = generatePrivateKey();
  let chain: DeployedChain;
  let anvil: Anvil;
  let verifier: Address;
  let t: TestApp;
  let dir: string;
  let file: string;
  let scorerId: number;
  let key: string;

  beforeAll(async () => {
    chain = await startDeployedChain(31337, privateKeyToAccount(signerKey), temporaryDeploymentFile());
    anvil = chain.anvil;
    verifier = chain.deployment.verifier as Address;
    // The owner (anvil's account 0) sets a fee, which every request must then carry.
    await anvil.write(anvil.wallets[0]!, verifier, verifierAbi, 'setFee', [12_345n]);
  }, 60_000);
  afterAll(async () => anvil?.stop());

  /** The deployment's entry, with the given RPC URL or none. */
  function deployedEntry(rpcUrl: string | null): ChainDeployment {
    const { signer: _signer, owner: _owner, rpc_url: _rpcUrl, ...entry } = chain.deployment;
    return rpcUrl ? { ...entry, rpc_url: rpcUrl } : entry;
  }
  const nonceOfAlice = () => chain.nonceOf(getAddress(alice.address));

  async function start(env: Record<string, string> = {}, rpcUrl: string | null = anvil.url) {
    writeDeploymentFile(file, [deployedEntry(rpcUrl)]);
    t = await createTestApp(kind, { ONCHAIN_CONFIG_FILE: file, ATTESTATION_SIGNER_KEY: signerKey, ...env });
    const account = await t.ctx.accounts.createAccount('attest');
    scorerId = (await t.ctx.accounts.createScorer(account.id, { name: 'attest', weights: { Google: '12.3456789', Discord: '8' } })).id;
    key = (await t.ctx.apiKeys.create(account.id)).key;
  }
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'stampgate-onchain-'));
    file = join(dir, 'onchain.json');
  });
  afterEach(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const post = (body: unknown, headers: Record<string, string> = { 'x-api-key': key }, chain = 31337) =>
    t.app.inject({ method: 'POST', url: `/v2/onchain/${chain}/attestations`, headers, payload: body as Record<string, unknown> });
  const recorded = async (address: string) => (await t.ctx.v2.events.scoreAt(t.ctx.database.db, scorerId, address, Date.now() + day)) ?? null;

  async function signIn(who: typeof alice): Promise<string> {
    const offer = (await t.app.inject({ method: 'GET', url: '/registry/wallet/siwe-nonce' })).json();
    const message = createSiweMessage({
      address: who.account.address,
      chainId: offer.chainId,
      domain: offer.domain,
      nonce: offer.nonce,
      uri: offer.uri,
      statement: offer.statement,
      version: '1',
      issuedAt: new Date(),
      expirationTime: new Date(offer.expiresAt),
    });
    const res = await t.app.inject({ method: 'POST', url: '/registry/wallet/session', payload: { message, signature: await who.account.signMessage({ message }) } });
    expect(res.statusCode).toBe(200);
    return res.json().token as string;
  }

  it('signs a request the verifier\'s EIP-712 types verify, with the chain\'s nonce and fee, the score and the passport', async () => {
    await start();
    await giveStamps(t.ctx, alice.address, [{ provider: 'Google', nullifiers: ['v0:google-alice'], expiresInMs: 20 * day }, 'Discord']);
    const before = Math.floor(Date.now() / 1000);
    const nonce = await nonceOfAlice();
    const res = await post({ address: alice.address.toUpperCase().replace('0X', '0x'), scorer_id: scorerId });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.chain_id).toBe(31337);
    expect(body.verifier).toBe(getAddress(verifier));
    expect(body.request).toMatchObject({ recipient: getAddress(alice.address), nonce: String(nonce), fee: '12345' });
    const deadline = Number(body.request.deadline);
    expect(deadline).toBeGreaterThanOrEqual(before + 3600);
    expect(deadline).toBeLessThanOrEqual(Math.floor(Date.now() / 1000) + 3600);
    const signer = t.ctx.onchain.signer!.address;
    const typed = {
      domain: { ...verifierEip712.domain, chainId: 31337, verifyingContract: body.verifier as Address },
      types: verifierEip712.types,
      primaryType: 'AttestationRequest' as const,
    };
    const message = {
      ...body.request,
      nonce: BigInt(body.request.nonce),
      deadline: BigInt(body.request.deadline),
      fee: BigInt(body.request.fee),
      attestations: body.request.attestations.map((a: { schema: Hex; expirationTime: string; data: Hex }) => ({ ...a, expirationTime: BigInt(a.expirationTime) })),
    };
    const signature = `${body.signature.r}${body.signature.s.slice(2)}${body.signature.v.toString(16)}` as Hex;
    expect(await verifyTypedData({ ...typed, message, address: signer, signature })).toBe(true);
    expect(await verifyTypedData({ ...typed, message: { ...message, nonce: 8n }, address: signer, signature })).toBe(false);
    expect(await verifyTypedData({ ...typed, domain: { ...typed.domain, chainId: 10 }, message, address: signer, signature })).toBe(false);

    // The score, as recorded, in the score attestation; the live stamps in the passport attestation.
    expect(body.score).toEqual((await t.app.inject({ url: `/v2/stamps/${scorerId}/score/${alice.address}`, headers: { 'x-api-key': key } })).json());
    expect((await recorded(alice.address))?.raw_score).toBe('20.34568');
    const [scoreAttestation, passportAttestation] = body.request.attestations;
    expect(scoreAttestation.schema).toBe(chain.deployment.score_schema_uid.toLowerCase());
    expect(passportAttestation.schema).toBe(chain.deployment.passport_schema_uid.toLowerCase());
    expect(decodeSchemaData(schemaStrings.score, scoreAttestation.data)).toMatchObject({ passing_score: true, score: '203456', threshold: '200000', scorer_id: String(scorerId) });
    const passport = decodeSchemaData(schemaStrings.passport, passportAttestation.data).stamps as { provider: string }[];
    expect(passport.map((s) => s.provider)).toEqual(['Discord', 'Google']);
    const googleExpiry = Math.floor(Date.parse(body.score.stamps.Google.expiration_date) / 1000);
    expect(Number(scoreAttestation.expirationTime)).toBe(googleExpiry);
    expect(Number(passportAttestation.expirationTime)).toBe(googleExpiry);

    // The real verifier accepts it, paid its fee, and counts the recipient's nonce: the next request carries the next one.
    await chain.submit(message, body.signature);
    expect(await nonceOfAlice()).toBe(nonce + 1n);
    expect((await post({ address: alice.address, scorer_id: scorerId })).json().request.nonce).toBe(String(nonce + 1n));
  });

  it('takes scorer_id as text, refuses bad bodies (400) and answers the other errors', async () => {
    await start();
    expect((await post({ address: alice.address, scorer_id: String(scorerId) })).statusCode).toBe(200);
    for (const bad of [{ address: alice.address, scorer_id: 1.5 }, { scorer_id: scorerId }, { address: 'nope', scorer_id: scorerId }, { address: alice.address, scorer_id: true }]) {
      expect((await post(bad)).statusCode).toBe(400);
    }
    const unknown = await post({ address: alice.address, scorer_id: scorerId }, { 'x-api-key': key }, 5);
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().code).toBe('chain_not_found');
    const other = await seedAccount(t.ctx);
    const foreign = await post({ address: bob.address, scorer_id: other.scorer.id });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json().code).toBe('scorer_not_found');
    const account = await t.ctx.accounts.createAccount('no reads');
    const writer = (await t.ctx.apiKeys.create(account.id, { permissions: ['submit_passports'] })).key;
    expect((await post({ address: alice.address, scorer_id: scorerId }, { 'x-api-key': writer })).statusCode).toBe(403);
    expect((await post({ address: alice.address, scorer_id: scorerId }, {})).statusCode).toBe(401);
    expect((await post({ address: alice.address, scorer_id: scorerId }, { authorization: 'Bearer not-a-session' })).statusCode).toBe(401);
  });

  it('accepts the address\'s own wallet session and refuses a session of another address (403)', async () => {
    await start();
    await giveStamps(t.ctx, alice.address, ['Google']);
    const token = await signIn(alice);
    const own = await post({ address: alice.address, scorer_id: scorerId }, { authorization: `Bearer ${token}` });
    expect(own.statusCode).toBe(200);
    expect(own.json().request.nonce).toBe(String(await nonceOfAlice()));
    const other = await post({ address: bob.address, scorer_id: scorerId }, { authorization: `Bearer ${token}` });
    expect(other.statusCode).toBe(403);
    expect(await recorded(bob.address)).toBeNull();
  });

  it('RPC down, hanging or answering garbage: 502 upstream_unavailable and nothing recorded', async () => {
    const closed = `http://127.0.0.1:${await freePort()}`;
    const hanging = await startRpcProbe(anvil.url, 'hang');
    const garbage = await startRpcProbe(anvil.url, 'rpc-error');
    try {
      for (const url of [closed, hanging.url, garbage.url]) {
        await start({ OUTBOUND_TIMEOUT_MS: '300' }, url);
        await giveStamps(t.ctx, alice.address, ['Google']);
        const res = await post({ address: alice.address, scorer_id: scorerId });
        expect(res.statusCode).toBe(502);
        expect(res.json().code).toBe('upstream_unavailable');
        expect(await recorded(alice.address)).toBeNull();
        await t.close();
        t = undefined as never;
      }
      // A verifier address with no contract answers nothing decodable: 502 too.
      writeDeploymentFile(file, [chainEntry(31337, { rpc_url: anvil.url })]);
      t = await createTestApp(kind, { ONCHAIN_CONFIG_FILE: file });
      const { scorer, key: otherKey } = await seedAccount(t.ctx);
      expect((await post({ address: alice.address, scorer_id: scorer.id }, { 'x-api-key': otherKey })).statusCode).toBe(502);
    } finally {
      await hanging.close();
      await garbage.close();
    }
  });

  it('ONCHAIN_RPC_URL_<id> wins over the file; no RPC URL at all is 503', async () => {
    const closed = `http://127.0.0.1:${await freePort()}`;
    await start({ ONCHAIN_RPC_URL_31337: anvil.url }, closed);
    expect((await post({ address: alice.address, scorer_id: scorerId })).statusCode).toBe(200);
    await t.close();
    await start({}, null);
    const res = await post({ address: alice.address, scorer_id: scorerId });
    expect(res.statusCode).toBe(503);
    expect(res.json().code).toBe('onchain_not_configured');
  });
});
