import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Address, zeroAddress } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keywordTags, legacyBountyReader, normalizeIssueUrl, readLegacyBounty, sourceProject } from '../../src/chain/legacy-bounty.js';
import { AppError } from '../../src/errors.js';
import type { FastifyInstance } from 'fastify';
import { createAppContext } from '../../src/app/container.js';
import { loadConfig } from '../../src/config/index.js';
import { buildServer } from '../../src/app/server.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { databaseKinds } from '../helpers/databases.js';
import { type Anvil, type Artifact, compileContracts, freePort, startAnvil, type TestWallet } from '../helpers/evm.js';

const ETH_URL = 'https://github.com/gitcoinco/web/issues/4242';
const TOKEN_URL = 'https://github.com/ethereum/solidity/issues/77/';
const NO_DECIMALS_URL = 'https://github.com/acme/widgets/pull/3';
const UNPOSTED_URL = 'https://github.com/gitcoinco/web/issues/1';

let anvil: Anvil;
let artifacts: Record<string, Artifact>;
let index: Address;
let token: Address;
let ethCreated: string;
let tokenCreated: string;

const ethRecord = () => ({
  amount: 1.5,
  amount_denomination: 'ETH',
  action_url: `${ETH_URL}/`,
  title: 'Fix the grants page',
  description: 'The grants page breaks on small screens.',
  created_on: ethCreated,
  source_project: 'gitcoinco/web',
  tags: ['python', 'django', 'web3'],
});

const tokenRecord = () => ({
  amount: 2.5,
  amount_denomination: 'USDC',
  action_url: TOKEN_URL,
  title: 'Better error messages',
  description: '',
  created_on: tokenCreated,
  source_project: 'ethereum/solidity',
  tags: ['c++'],
});

/** A second server with other settings over the same (already migrated) test database. */
async function serverWith(t: TestApp, env: Record<string, string>): Promise<{ app: FastifyInstance; close(): Promise<void> }> {
  const config = loadConfig({ ...env, DATABASE_URL: t.test.url, DATA_DIR: t.ctx.config.dataDir, STAMPGATE_ENV: 'development' });
  const ctx = await createAppContext(config, t.ctx.database, { http: true });
  const app = await buildServer(ctx, { logger: false });
  await app.ready();
  return { app, close: () => app.close() };
}

async function blockTime(blockNumber: bigint): Promise<string> {
  const block = await anvil.publicClient.getBlock({ blockNumber });
  return new Date(Number(block.timestamp) * 1000).toISOString();
}

beforeAll(async () => {
  artifacts = compileContracts('BountyIndex.sol', 'TestToken.sol');
  anvil = await startAnvil();
  const [deployer, poster] = anvil.wallets as [TestWallet, TestWallet];
  index = (await anvil.deploy(deployer, artifacts.BountyIndex!)).address;
  token = (await anvil.deploy(deployer, artifacts.TestToken!, ['USD Coin', 'USDC', 6])).address;
  const post = (url: string, amount: bigint, tokenAddress: Address, metadata: unknown) =>
    anvil.write(poster, index, artifacts.BountyIndex!.abi, 'postBounty', [url, amount, tokenAddress, JSON.stringify(metadata), 0n]);
  // 1.5 ETH in wei; the URL is posted without the trailing slash the contract adds.
  ethCreated = await blockTime(
    await post(ETH_URL, 1_500_000_000_000_000_000n, zeroAddress, {
      issueTitle: 'Fix the grants page',
      issueDescription: 'The grants page breaks on small screens.',
      issueKeywords: ' python, django,, web3 ,',
      tokenName: 'ETH',
      githubUsername: 'octocat',
      experienceLevel: 'Beginner',
    }),
  );
  // 2.5 USDC: the token has 6 decimals; no description in the metadata.
  tokenCreated = await blockTime(
    await post(TOKEN_URL, 2_500_000n, token, { issueTitle: 'Better error messages', issueKeywords: 'c++', tokenName: 'USDC' }),
  );
  // A "token" address without a contract: 18 decimals, and without tokenName the address names it.
  await post(NO_DECIMALS_URL, 3n * 10n ** 17n, '0x000000000000000000000000000000000000dEaD', { issueTitle: 'No metadata token' });
}, 60_000);
afterAll(async () => anvil?.stop());

describe('legacy bounty mapping helpers', () => {
  it('normalises the URL like the contract, and takes org/repo and tags from it', () => {
    expect(normalizeIssueUrl('https://github.com/a/b/issues/1')).toBe('https://github.com/a/b/issues/1/');
    expect(normalizeIssueUrl('https://github.com/a/b/issues/1/')).toBe('https://github.com/a/b/issues/1/');
    expect(sourceProject('https://github.com/a/b/issues/1/')).toBe('a/b');
    expect(sourceProject('https://example.org/')).toBe('');
    expect(keywordTags(' a, b ,,c ')).toEqual(['a', 'b', 'c']);
    expect(keywordTags(['x ', ''])).toEqual(['x']);
    expect(keywordTags(undefined)).toEqual([]);
  });
});

describe('readLegacyBounty on anvil', () => {
  it('reads an ETH bounty and a token bounty and maps them to the legacy record', async () => {
    expect(await readLegacyBounty(anvil.publicClient, index, ETH_URL)).toEqual(ethRecord());
    expect(await readLegacyBounty(anvil.url, index, TOKEN_URL)).toEqual(tokenRecord());
    // The same bounty with or without the trailing slash.
    expect(await readLegacyBounty(anvil.url, index.toLowerCase(), `${ETH_URL}/`)).toEqual(ethRecord());
    expect(ethRecord().created_on).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('uses 18 decimals and the token address when the token cannot say more', async () => {
    expect(await readLegacyBounty(anvil.url, index, NO_DECIMALS_URL)).toMatchObject({
      amount: 0.3,
      amount_denomination: '0x000000000000000000000000000000000000dead',
      title: 'No metadata token',
      tags: [],
      source_project: 'acme/widgets',
    });
  });

  it('returns null for a URL without a bounty', async () => {
    expect(await readLegacyBounty(anvil.url, index, UNPOSTED_URL)).toBeNull();
  });

  it('refuses an index address that is not an address', async () => {
    await expect(readLegacyBounty(anvil.url, '0x1234', ETH_URL)).rejects.toMatchObject({ code: 'invalid_request' });
  });

  it('fails with upstream_unavailable when the endpoint is down or the address is no index', async () => {
    const stopped = await startAnvil();
    await stopped.stop();
    const down = await readLegacyBounty(stopped.url, index, ETH_URL).catch((e: unknown) => e);
    expect(down).toBeInstanceOf(AppError);
    expect(down).toMatchObject({
      code: 'upstream_unavailable',
      message: `The Ethereum RPC endpoint ${stopped.url} could not be reached to read the legacy bounty index: the endpoint could not be reached.`,
    });
    const notIndex = await readLegacyBounty(anvil.url, token, ETH_URL).catch((e: unknown) => e);
    expect(notIndex).toMatchObject({ code: 'upstream_unavailable', message: expect.stringContaining('is it the bounty index contract') });
  });
});

describe('legacyBountyReader', () => {
  it('refuses when ETH_RPC_URL or the index address is not configured', async () => {
    for (const options of [
      { rpcUrl: null, indexAddress: index },
      { rpcUrl: anvil.url, indexAddress: null },
      { rpcUrl: null, indexAddress: null },
    ]) {
      const reader = legacyBountyReader(options);
      expect(reader.configured).toBe(false);
      await expect(reader.read(ETH_URL)).rejects.toMatchObject({ code: 'not_found', message: expect.stringContaining('not configured') });
    }
    expect(legacyBountyReader({ rpcUrl: anvil.url, indexAddress: index }).configured).toBe(true);
  });
});

describe.each(databaseKinds)('GET /api/v0.1/legacy/bounty on %s', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(kind, { ETH_RPC_URL: anvil.url, LEGACY_BOUNTY_INDEX_ADDRESS: index });
  });
  afterAll(async () => t?.close());

  const get = (app: { app: FastifyInstance }, url: string) => app.app.inject({ url: `/api/v0.1/legacy/bounty?url=${encodeURIComponent(url)}` });

  it('answers both bounties without an API key', async () => {
    const eth = await get(t, ETH_URL);
    expect(eth.statusCode).toBe(200);
    expect(eth.json()).toEqual(ethRecord());
    const tok = await get(t, TOKEN_URL);
    expect(tok.statusCode).toBe(200);
    expect(tok.json()).toEqual(tokenRecord());
  });

  it('answers 404 not_found for a URL without a bounty', async () => {
    const res = await get(t, UNPOSTED_URL);
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ detail: `No legacy bounty is posted for ${UNPOSTED_URL}/.`, code: 'not_found' });
  });

  it.each([
    ['no url', '/api/v0.1/legacy/bounty', 'invalid_request'],
    ['a relative url', `/api/v0.1/legacy/bounty?url=${encodeURIComponent('/issues/1')}`, 'invalid_parameter'],
    ['a non-http url', `/api/v0.1/legacy/bounty?url=${encodeURIComponent('ftp://github.com/a/b/issues/1')}`, 'invalid_parameter'],
    ['a url over 2000 characters', `/api/v0.1/legacy/bounty?url=${encodeURIComponent(`https://github.com/a/b/issues/${'1'.repeat(2000)}`)}`, 'invalid_parameter'],
  ])('answers %s with 400', async (_what, url, code) => {
    const res = await t.app.inject({ url });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ detail: expect.any(String), code });
  });

  it('answers 502 upstream_unavailable when the RPC endpoint is stopped', async () => {
    const stopped = await startAnvil();
    await stopped.stop();
    const down = await serverWith(t, { ETH_RPC_URL: stopped.url, LEGACY_BOUNTY_INDEX_ADDRESS: index });
    try {
      const res = await get(down, ETH_URL);
      expect(res.statusCode).toBe(502);
      expect(res.json()).toEqual({
        detail: `The Ethereum RPC endpoint ${stopped.url} could not be reached to read the legacy bounty index: the endpoint could not be reached.`,
        code: 'upstream_unavailable',
      });
    } finally {
      await down.close();
    }
  });

  it('caches a found record like the public lists: one eth_call per URL within the TTL, ETag and 304; refusals never cached', async () => {
    // A real JSON-RPC relay in front of anvil that counts what reaches the chain.
    let calls = 0;
    const relay = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', async () => {
        calls += 1;
        const upstream = await fetch(anvil.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: Buffer.concat(chunks) });
        res.writeHead(upstream.status, { 'content-type': 'application/json' }).end(await upstream.text());
      });
    });
    await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
    const relayUrl = `http://127.0.0.1:${(relay.address() as AddressInfo).port}`;
    const cached = await serverWith(t, { ETH_RPC_URL: relayUrl, LEGACY_BOUNTY_INDEX_ADDRESS: index, PUBLIC_CACHE_TTL: '60' });
    const uncached = await serverWith(t, { ETH_RPC_URL: relayUrl, LEGACY_BOUNTY_INDEX_ADDRESS: index, PUBLIC_CACHE_TTL: '0' });
    try {
      const first = await get(cached, ETH_URL);
      expect(first.statusCode).toBe(200);
      expect(first.json()).toEqual(ethRecord());
      expect(first.headers.etag).toMatch(/^"[\w-]{27}"$/);
      expect(first.headers['cache-control']).toMatch(/^public, max-age=(59|60)$/);
      const afterFirst = calls;
      expect(afterFirst).toBeGreaterThan(0);
      // The same bounty again, also under the URL the index normalises to: no call reaches the chain.
      const again = await get(cached, `${ETH_URL}/`);
      expect(again.statusCode).toBe(200);
      expect(again.body).toBe(first.body);
      const notModified = await cached.app.inject({ url: `/api/v0.1/legacy/bounty?url=${encodeURIComponent(ETH_URL)}`, headers: { 'if-none-match': first.headers.etag as string } });
      expect(notModified.statusCode).toBe(304);
      expect(calls).toBe(afterFirst);
      // A URL without a bounty is asked every time (a bounty posted meanwhile shows at once).
      expect((await get(cached, UNPOSTED_URL)).statusCode).toBe(404);
      const afterMiss = calls;
      expect(afterMiss).toBeGreaterThan(afterFirst);
      expect((await get(cached, UNPOSTED_URL)).statusCode).toBe(404);
      expect(calls).toBeGreaterThan(afterMiss);
      // With the cache off, every read reaches the chain.
      const before = calls;
      expect((await get(uncached, ETH_URL)).statusCode).toBe(200);
      expect((await get(uncached, ETH_URL)).statusCode).toBe(200);
      expect(calls).toBeGreaterThanOrEqual(before + 2);
    } finally {
      await cached.close();
      await uncached.close();
      await new Promise((resolve) => relay.close(resolve));
    }
  });

  it('answers 404 not_found saying the read is not configured', async () => {
    const bare = await serverWith(t, {});
    try {
      const res = await get(bare, ETH_URL);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({
        detail: 'The legacy bounty read is not configured on this server (ETH_RPC_URL and LEGACY_BOUNTY_INDEX_ADDRESS are unset).',
        code: 'not_found',
      });
    } finally {
      await bare.close();
    }
  });

  it('is documented with its responses', async () => {
    const doc = (await t.app.inject('/openapi.json')).json();
    const op = doc.paths['/api/v0.1/legacy/bounty'].get;
    expect(Object.keys(op.responses).sort()).toEqual(['200', '400', '404', '502']);
    expect(op.parameters).toEqual([expect.objectContaining({ name: 'url', in: 'query', required: true })]);
    expect(op.responses['200'].content['application/json'].schema.required).toEqual([
      'amount',
      'amount_denomination',
      'action_url',
      'title',
      'description',
      'created_on',
      'source_project',
      'tags',
    ]);
  });
});

// A freshly freed port is another way an endpoint can be down (nothing ever listened there).
it('a reader over a port nobody listens on answers upstream_unavailable', async () => {
  const reader = legacyBountyReader({ rpcUrl: `http://127.0.0.1:${await freePort()}`, indexAddress: index });
  await expect(reader.read(ETH_URL)).rejects.toMatchObject({ code: 'upstream_unavailable' });
});
