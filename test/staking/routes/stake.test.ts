import type { Address } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAppContext } from '../../../src/app/container.js';
import { loadConfig } from '../../../src/config/index.js';
import { buildServer } from '../../../src/app/server.js';
import { createTestApp, seedAccount, type TestApp } from '../../helpers/app.js';
import { databaseKinds } from '../../helpers/databases.js';
import { type Anvil, type Artifact, compileContracts, startAnvil, type TestWallet } from '../../helpers/evm.js';

const BIG = 2n ** 64n + 123_456_789n; // > 2^53: a float would change the digits
const E18 = 10n ** 18n;

let anvil: Anvil;
let staking: Artifact;
let contract: Address;
let deployBlock: bigint;
let alice: TestWallet;
let bob: TestWallet;
let carol: TestWallet;

// One chain history for both databases: each indexes it into its own store.
beforeAll(async () => {
  staking = compileContracts('IdentityStaking.sol').IdentityStaking!;
  anvil = await startAnvil();
  const [owner] = anvil.wallets as [TestWallet];
  [, alice, bob, carol] = anvil.wallets as [TestWallet, TestWallet, TestWallet, TestWallet];
  ({ address: contract, blockNumber: deployBlock } = await anvil.deploy(owner, staking));
  const call = (w: TestWallet, fn: string, args: readonly unknown[]) => anvil.write(w, contract, staking.abi, fn, args);
  await call(owner, 'createRound', []);
  await call(owner, 'createRound', []);
  await call(alice, 'stake', [1n, BIG]);
  await call(alice, 'stake', [2n, 3n * E18]);
  await call(alice, 'unstake', [2n, E18]);
  await call(bob, 'stakeUsers', [1n, [alice.account.address, carol.account.address], [BIG, 5n]]);
  await call(carol, 'stakeUsers', [1n, [alice.account.address], [BIG]]);
  await call(carol, 'stakeUsers', [2n, [alice.account.address], [7n]]);
}, 60_000);
afterAll(async () => anvil?.stop());

describe.each(databaseKinds)('GET /registry/{token}-stake/{address} on %s', (kind) => {
  let t: TestApp;
  let key: string;
  let accountId: number;
  const lower = (w: TestWallet) => w.account.address.toLowerCase();

  async function get(url: string, apiKey: string | null = key) {
    return t.app.inject({ url, headers: apiKey ? { 'x-api-key': apiKey } : {} });
  }

  beforeAll(async () => {
    t = await createTestApp(kind, {
      STAKING_RPC_URL: anvil.url,
      STAKING_CONTRACT_ADDRESS: contract,
      STAKING_START_BLOCK: deployBlock.toString(),
      STAKING_CONFIRMATIONS: '0',
    });
    const run = await t.ctx.staking.indexer!.runOnce();
    expect(run.stored).toBe(7);
    const seeded = await seedAccount(t.ctx);
    key = seeded.key;
    accountId = seeded.account.id;
  }, 60_000);
  afterAll(async () => t?.close());

  const aliceAmounts = () => ({
    users: [
      {
        address: lower(alice),
        stakes: [
          { stake: BIG.toString(), round: { id: '1' } },
          { stake: (2n * E18).toString(), round: { id: '2' } },
        ],
        xstakeAggregates: [
          { total: (2n * BIG).toString(), round: { id: '1' } },
          { total: '7', round: { id: '2' } },
        ],
      },
    ],
  });

  it('answers the self and community stakes of an address with exact wei strings, on the gtc and govtoken paths', async () => {
    for (const path of ['gtc-stake', 'govtoken-stake']) {
      const res = await get(`/registry/${path}/${alice.account.address}`); // checksummed (mixed case) input
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toContain('application/json');
      // The raw body, not a parsed one: the digits must be exactly these strings.
      expect(res.body).toBe(JSON.stringify(aliceAmounts()));
    }
    expect(res2json(await get(`/registry/gtc-stake/${lower(carol)}`))).toEqual({
      users: [{ address: lower(carol), stakes: [], xstakeAggregates: [{ total: '5', round: { id: '1' } }] }],
    });
  });

  it('answers {"users":[]} for an address without stakes', async () => {
    const res = await get(`/registry/gtc-stake/0x${'0'.repeat(39)}1`);
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe('{"users":[]}');
    // Bob only staked on others.
    expect(res2json(await get(`/registry/govtoken-stake/${lower(bob)}`))).toEqual({ users: [] });
  });

  it.each([
    ['a malformed address', () => '/registry/gtc-stake/0x1234', () => key, 400, 'invalid_address'],
    ['no API key', () => `/registry/gtc-stake/${lower(alice)}`, () => null, 401, 'missing_api_key'],
    ['an unknown API key', () => `/registry/govtoken-stake/${lower(alice)}`, () => 'abcdefgh.nope', 401, 'invalid_api_key'],
    ['another token symbol', () => `/registry/abc-stake/${lower(alice)}`, () => key, 404, 'not_found'],
  ])('answers %s with %i %s', async (_what, url, apiKey, status, code) => {
    const res = await get(url(), apiKey());
    expect(res.statusCode).toBe(status);
    expect(res.json()).toEqual({ detail: expect.any(String), code });
  });

  it('needs the read_scores permission', async () => {
    const { key: submitOnly } = await t.ctx.apiKeys.create(accountId, { canRead: false });
    const res = await get(`/registry/gtc-stake/${lower(alice)}`, submitOnly);
    expect(res.statusCode).toBe(403);
    expect(res.json().code).toBe('permission_denied');
  });

  it('documents both paths with their responses in the OpenAPI document', async () => {
    const doc = (await t.app.inject('/openapi.json')).json();
    for (const path of ['/registry/gtc-stake/{address}', '/registry/govtoken-stake/{address}']) {
      const op = doc.paths[path].get;
      expect(op.security).toEqual([{ apiKey: [] }]);
      expect(Object.keys(op.responses).sort()).toEqual(['200', '400', '401', '403', '429']);
      expect(op.responses['200'].content['application/json'].schema.required).toEqual(['users']);
      expect(JSON.stringify(op.responses['400'])).toContain('ErrorBody');
    }
  });
});

describe('the governance token symbol in the path', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp('sqlite', { GOVERNANCE_TOKEN: 'ABC' });
  });
  afterAll(async () => t?.close());

  it('follows GOVERNANCE_TOKEN, and govtoken-stake always works', async () => {
    const { key } = await seedAccount(t.ctx);
    const address = '0x' + 'a1'.repeat(20);
    await t.ctx.staking.stakes.importEvents([
      { type: 'selfStake', roundId: '4', staker: address, amount: BIG.toString(), staked: true, txHash: '0x' + '1'.repeat(64), logIndex: 0, blockNumber: 9 },
    ]);
    const expected = JSON.stringify({ users: [{ address, stakes: [{ stake: BIG.toString(), round: { id: '4' } }], xstakeAggregates: [] }] });
    for (const path of ['abc-stake', 'govtoken-stake']) {
      const res = await t.app.inject({ url: `/registry/${path}/${address}`, headers: { 'x-api-key': key } });
      expect(res.statusCode).toBe(200);
      expect(res.body).toBe(expected);
    }
    const gtc = await t.app.inject({ url: `/registry/gtc-stake/${address}`, headers: { 'x-api-key': key } });
    expect(gtc.statusCode).toBe(404);
  });

  it('registers govtoken-stake once when the token is named govtoken', async () => {
    // A second server over the same database, with GOVERNANCE_TOKEN=govtoken (a duplicate route would not start).
    const config = loadConfig({ GOVERNANCE_TOKEN: 'govtoken', DATABASE_URL: t.test.url, DATA_DIR: t.ctx.config.dataDir });
    const app = await buildServer(await createAppContext(config, t.ctx.database, { http: true }), { logger: false });
    try {
      await app.ready();
      const { key } = await seedAccount(t.ctx);
      const res = await app.inject({ url: `/registry/govtoken-stake/0x${'b2'.repeat(20)}`, headers: { 'x-api-key': key } });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ users: [] });
    } finally {
      await app.close();
    }
  });
});

function res2json(res: { statusCode: number; json(): unknown }) {
  expect(res.statusCode).toBe(200);
  return res.json();
}
