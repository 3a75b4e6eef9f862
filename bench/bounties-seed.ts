/**
 * Bounties for the benchmark of `GET /api/v0.1/bounties/`: `seedBounties(ctx, n)`
 * inserts n realistic bounties (10,000 in the benchmark) with batched
 * multi-row inserts in one transaction, through the same writes as
 * `stampgate data import`, and drops the cached bounty lists.
 *
 * The data is deterministic (a seeded generator), so runs compare. Value
 * spreads are realistic: about 45% of bounties are open, statuses, types,
 * lengths and levels follow a skewed mix, amounts span five orders of
 * magnitude, and owners repeat (a few hundred owners post most bounties).
 *
 * A query worth measuring (two filters and an order, walking
 * `bounties_value_in_eth_sort_idx` backwards):
 *   /api/v0.1/bounties/?is_open=true&experience_level=beginner&order_by=-value_in_eth&limit=50
 */
import { sql } from 'kysely';
import type { AppContext } from '../src/app/container.js';
import type { BountyVocabularyColumns } from '../src/db/tables/bounty-vocabulary.js';
import type { BountiesTable, BountyStatus } from '../src/db/tables/public-data.js';
import { bountyPeople } from '../src/publicdata/bounties/bounty-vocabulary-records.js';
import { cachePrefix } from '../src/publicdata/cache.js';
import { OPEN_STATUSES } from '../src/publicdata/import/import-records.js';
import { importRepository } from '../src/publicdata/import/import.repository.js';
import { decimalOrderKey } from '../src/publicdata/values.js';
import type { LoadCase } from './load.js';

/** The benchmark's list (see above): two filters and an order, open beginner bounties, most valuable first. */
export const BOUNTIES_PATH = '/api/v0.1/bounties/?is_open=true&experience_level=beginner&order_by=-value_in_eth&limit=50';

/** The bounties cases' requests, and the check of a sample of their bodies. */
export function bountiesLoad(): Omit<LoadCase, 'url' | 'connections' | 'warmupSeconds' | 'seconds' | 'around'> {
  return {
    method: 'GET',
    // What the Python client (requests), browsers and fetch send: a cached list is answered gzipped.
    headers: { 'accept-encoding': 'gzip, deflate' },
    path: () => BOUNTIES_PATH,
    checkBody: (body) => {
      const list = JSON.parse(body) as { experience_level?: string; is_open?: boolean }[];
      if (!Array.isArray(list) || list.length === 0) return 'empty list';
      return list.every((b) => b.is_open === true && b.experience_level?.toLowerCase() === 'beginner') ? null : 'filter not applied';
    },
  };
}

const DAY_MS = 86_400_000;
const START = Date.UTC(2024, 0, 1);
const OPEN_EXTRA_DAYS = 1500;

/** mulberry32: small, fast, seeded. */
function generator(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function weighted<T>(random: () => number, choices: [T, number][]): T {
  const total = choices.reduce((sum, [, w]) => sum + w, 0);
  let at = random() * total;
  for (const [value, weight] of choices) {
    at -= weight;
    if (at <= 0) return value;
  }
  return choices[choices.length - 1]![0];
}

const hex = (random: () => number, digits: number) =>
  Array.from({ length: digits }, () => Math.floor(random() * 16).toString(16)).join('');

const ORGS = ['ethereum', 'gitcoinco', 'ethers-io', 'foundry-rs', 'OpenZeppelin', 'uniswap', 'aave', 'web3-docs', 'climate-oracles', 'ipfs'];
const REPOS = ['core', 'docs', 'sdk', 'contracts', 'website', 'cli', 'indexer', 'dashboard'];
const VERBS = ['Fix', 'Add', 'Document', 'Refactor', 'Speed up', 'Translate', 'Test', 'Audit'];
const THINGS = ['gas estimation', 'the staking guide', 'event decoding', 'wallet connection', 'the CLI help', 'fee history', 'ENS lookups', 'RPC retries'];
const TOKENS: [string, string | null, number][] = [
  ['ETH', '0x0000000000000000000000000000000000000000', 18],
  ['DAI', '0x6b175474e89094c44da98b954eedeac495271d0f', 18],
  ['USDC', '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48', 6],
];

/** One realistic bounty row with the given id. */
export function bountyRow(id: number, random: () => number, owners: string[]): BountiesTable {
  const org = ORGS[Math.floor(random() * ORGS.length)]!;
  const repo = REPOS[Math.floor(random() * REPOS.length)]!;
  const issue = String(1 + Math.floor(random() * 5000));
  const created = START + Math.floor(random() * 700 * DAY_MS);
  const status = weighted<BountyStatus>(random, [
    ['open', 30],
    ['started', 10],
    ['submitted', 5],
    ['done', 35],
    ['expired', 20],
  ]);
  const [tokenName, tokenAddress, decimals] = TOKENS[weighted(random, [[0, 5], [1, 3], [2, 2]])]!;
  const eth = (Math.exp(random() * Math.log(10_000)) / 1000).toFixed(4); // 0.001 … 10
  const ethPrice = 1500 + Math.floor(random() * 2500);
  const usdt = (Number(eth) * ethPrice).toFixed(2);
  const valueInToken =
    tokenName === 'ETH' ? (BigInt(Math.round(Number(eth) * 1e4)) * 10n ** BigInt(decimals - 4)).toString() : (BigInt(Math.round(Number(usdt) * 100)) * 10n ** BigInt(decimals - 2)).toString();
  const fulfilled = status === 'started' || status === 'submitted' || status === 'done';
  const fulfiller = fulfilled ? `dev${Math.floor(random() * 2000)}` : null;
  const owner = owners[Math.floor(random() ** 2 * owners.length)]!;
  const usdtNow = (Number(eth) * 3350).toFixed(2);
  return {
    id,
    title: `${VERBS[Math.floor(random() * VERBS.length)]} ${THINGS[Math.floor(random() * THINGS.length)]} (#${issue})`,
    github_url: `https://github.com/${org}/${repo}/issues/${issue}`,
    github_org_name: org,
    github_repo_name: repo,
    github_issue_number: issue,
    created_on: created,
    modified_on: created + Math.floor(random() * 30 * DAY_MS),
    web3_created: created,
    // Bounties still open expire after the seed's timeline (2028 on), so `is_open=true` finds them whenever the benchmark runs.
    expires_date: created + (14 + Math.floor(random() * 90) + (OPEN_STATUSES.includes(status) ? OPEN_EXTRA_DAYS : 0)) * DAY_MS,
    value_in_token: valueInToken,
    value_in_token_sort: decimalOrderKey(valueInToken),
    token_name: tokenName,
    token_address: tokenAddress,
    bounty_type: weighted(random, [['bug', 30], ['feature', 35], ['security', 5], ['documentation', 15], ['improvement', 15]]),
    project_length: weighted(random, [['Hours', 25], ['Days', 45], ['Weeks', 25], ['Months', 5]]),
    experience_level: weighted(random, [['Beginner', 35], ['Intermediate', 45], ['Advanced', 20]]),
    keywords: [repo, weighted(random, [['solidity', 3], ['typescript', 3], ['rust', 2], ['python', 1], ['docs', 1]])].join(','),
    current_bounty: 1,
    value_in_eth: eth,
    value_in_eth_sort: decimalOrderKey(eth),
    value_in_usdt: usdt,
    value_in_usdt_sort: decimalOrderKey(usdt),
    value_in_usdt_now: usdtNow,
    value_in_usdt_now_sort: decimalOrderKey(usdtNow),
    action_urls: JSON.stringify({ fulfill: `https://bounties.example.org/${id}/fulfill` }),
    paid: JSON.stringify(status === 'done' && fulfiller ? [fulfiller] : []),
    status,
    is_open: OPEN_STATUSES.includes(status) ? 1 : 0,
    bounty_owner_address: owner,
    bounty_owner_email: '',
    bounty_owner_github_username: `owner${owners.indexOf(owner)}`,
    metadata: JSON.stringify({ source: 'bench' }),
    fulfiller_address: fulfiller ? `0x${hex(random, 40)}` : null,
    fulfiller_email: fulfiller ? `${fulfiller}@example.org` : null,
    fulfiller_github_username: fulfiller,
    fulfiller_metadata: JSON.stringify(fulfiller ? { githubUsername: fulfiller, notificationEmail: `${fulfiller}@example.org` } : {}),
    ...vocabularyColumns(id, generator(seedOfVocabulary + id), created, fulfiller, title(org, repo, issue)),
  };
}

/** A second generator per row, so the vocabulary fields leave the original columns' values as they were. */
const seedOfVocabulary = 0x5eed0000;
const NETWORKS: [string, number][] = [['mainnet', 80], ['rinkeby', 12], ['xdai', 5], ['polygon', 3]];

function title(org: string, repo: string, issue: string): string {
  return `${org}/${repo}#${issue}`;
}

/**
 * The optional vocabulary of the original service (migration 0010): about one
 * bounty in ten leaves a field out (null), as imported data would.
 */
function vocabularyColumns(id: number, random: () => number, created: number, fulfiller: string | null, issueRef: string): BountyVocabularyColumns {
  const maybe = <T>(value: T): T | null => (random() < 0.1 ? null : value);
  const date = (after: number) => maybe(created + Math.floor(random() * after * DAY_MS));
  const decimal = (max: number) => maybe((random() * max).toFixed(2));
  const interested = random() < 0.85 ? Array.from({ length: Math.floor(random() * 4) }, () => `dev${Math.floor(random() * 2000)}`) : null;
  const balance = decimal(5000);
  const tokenValueInUsdt = decimal(4000);
  const valueTrue = decimal(10);
  return {
    web3_type: maybe(weighted(random, [['bounties_network', 90], ['legacy_gitcoin', 10]])),
    github_comments: maybe(Math.floor(random() * 40)),
    bounty_owner_name: maybe(`Owner ${Math.floor(random() * 300)}`),
    raw_data: maybe(JSON.stringify({ issue: issueRef, payload: { keywords: random() < 0.3 ? 'solidity,gas' : 'docs' } })),
    contract_address: maybe(`0x${hex(random, 40)}`),
    network: maybe(weighted(random, NETWORKS)),
    issue_description: maybe(`Details of ${issueRef}`),
    standard_bounties_id: maybe(id * 3),
    num_fulfillments: maybe(fulfiller ? 1 + Math.floor(random() * 3) : 0),
    balance,
    balance_sort: balance === null ? null : decimalOrderKey(balance),
    accepted: maybe(random() < 0.35 ? 1 : 0),
    interested: interested === null ? null : JSON.stringify(interested),
    interested_count: interested === null ? null : interested.length,
    interested_comment: maybe(Math.floor(random() * 1_000_000)),
    submissions_comment: maybe(Math.floor(random() * 1_000_000)),
    override_status: random() < 0.05 ? 'on hold' : null,
    last_comment_date: date(60),
    fulfillment_accepted_on: fulfiller ? date(90) : null,
    fulfillment_submitted_on: fulfiller ? date(60) : null,
    fulfillment_started_on: fulfiller ? date(30) : null,
    canceled_on: random() < 0.05 ? created + DAY_MS : null,
    snooze_warnings_for_days: maybe(Math.floor(random() * 14)),
    token_value_time_peg: date(1),
    token_value_in_usdt: tokenValueInUsdt,
    token_value_in_usdt_sort: tokenValueInUsdt === null ? null : decimalOrderKey(tokenValueInUsdt),
    value_true: valueTrue,
    value_true_sort: valueTrue === null ? null : decimalOrderKey(valueTrue),
    privacy_preferences: maybe(JSON.stringify({ show_email: random() < 0.5 })),
    fulfillments: fulfiller ? JSON.stringify([{ fulfiller_github_username: fulfiller, accepted: random() < 0.5 }]) : null,
  };
}

/**
 * Inserts `n` bounties with ids after the largest stored one (so it can be
 * called on a database that already has some), in one transaction. Returns
 * the ids used.
 */
export async function seedBounties(ctx: AppContext, n: number, seed = 1): Promise<{ firstId: number; lastId: number }> {
  const db = ctx.database.db;
  const max = await db.selectFrom('bounties').select((eb) => eb.fn.max('id').as('id')).executeTakeFirst();
  const firstId = Number(max?.id ?? 0) + 1;
  const random = generator(seed);
  const owners = Array.from({ length: 300 }, () => `0x${hex(random, 40)}`);
  const rows = Array.from({ length: n }, (_, i) => bountyRow(firstId + i, random, owners));
  await db.transaction().execute(async (trx) => {
    const repo = importRepository(trx);
    await repo.upsertBounties(rows);
    await repo.replaceBountyPeople(rows.map((r) => r.id), rows.flatMap(bountyPeople));
  });
  // What autovacuum does shortly after a bulk load: statistics for the planner, and the visibility map
  // that lets an index-only walk skip the table. Measuring before it would measure the load, not the list.
  if (ctx.database.dialect === 'postgres') await sql`vacuum (analyze) bounties, bounty_bodies`.execute(db);
  await ctx.publicData.cache.invalidate([cachePrefix.bounties]);
  return { firstId, lastId: firstId + n - 1 };
}
