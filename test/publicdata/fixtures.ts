import type { AppContext } from '../../src/app/container.js';

/** Shared data of the public data tests, in the import format (docs/public-data-import.md). */

export const addr = (tag: string, n: number) => `0x${tag.repeat(4)}${n.toString(16).padStart(32, '0')}`;
export const wallet = (n: number) => addr('ee', n).slice(0, 42);

const day = (n: number) => `2026-01-${String(n).padStart(2, '0')}T10:00:00Z`;

/** Six bounties, one per row of the filter tables in bounties.test.ts. */
export function bountyFixtures() {
  const base = {
    token_name: 'ETH',
    token_address: '0x0000000000000000000000000000000000000000',
    expires_date: '2099-12-31T00:00:00Z',
  };
  const rows: [number, string, string, string, string, string, string, string, string | null][] = [
    // id, title, experience_level, project_length, bounty_type, owner, status, value_in_token, value_in_eth
    [1, 'Alpha', 'Beginner', 'Hours', 'Bug', addr('aa', 1), 'open', '10', '0.5'],
    [2, 'beta', 'Intermediate', 'Days', 'Feature', addr('aa', 2), 'started', '9', '1.25'],
    [3, 'Gamma', 'Advanced', 'Weeks', 'Security', addr('bb', 3), 'submitted', '100', '0.1'],
    [4, 'delta', 'beginner', 'Months', 'bug-fix', addr('bb', 4), 'done', '1000000000000000000000', null],
    [5, 'Epsilon', 'Expert', 'Days', 'feature', addr('cc', 5), 'expired', '0.5', '2'],
    [6, 'zeta', 'Intermediate', 'Hours', 'Documentation', addr('cc', 6), 'open', '99.99', '0.75'],
  ];
  return rows.map(([id, title, level, length, type, owner, status, token, eth]) => ({
    ...base,
    id,
    title,
    github_url: `https://github.com/org/repo/issues/${id}`,
    web3_created: day(id),
    experience_level: level,
    project_length: length,
    bounty_type: type,
    bounty_owner_address: owner.toUpperCase().replace('0X', '0x'),
    status,
    value_in_token: token,
    ...(eth === null ? {} : { value_in_eth: eth }),
    ...(status === 'done'
      ? { fulfiller_address: wallet(1), fulfiller_github_username: 'erin', fulfiller_metadata: { githubUsername: 'erin' }, paid: ['erin'] }
      : {}),
  }));
}

export const profileFixtures = [
  { handle: 'alice', avatar_url: 'https://img.example.org/alice.png', keywords: ['solidity'], position: 3, total_earned: '12.75' },
  { handle: 'Bob', avatar_url: 'https://img.example.org/bob.png' },
  { handle: 'carol', avatar_url: 'https://img.example.org/carol.png', organizations: { docs: 'member' } },
  { handle: 'dave', avatar_url: 'https://img.example.org/dave.png', export_opt_out: true },
  { handle: 'erin', avatar_url: 'https://img.example.org/erin.png' },
  { handle: 'frank', avatar_url: 'https://img.example.org/frank.png' },
];

export const grantFixtures = [
  {
    id: 1,
    title: 'Solidity Linter',
    description: 'A linter for Solidity.',
    reference_url: 'https://github.com/ethlint/solint',
    admin_address: addr('a1', 1),
    admin_profile: 'alice',
    team_members: ['carol'],
    grant_type: 'tech',
    amount_received: '1234.50',
    required_gas_price: '0.5',
    contract_address: addr('c1', 1),
    token_address: addr('d1', 1),
  },
  {
    id: 2,
    title: 'Client Dashboard',
    description: 'Dashboard of Ethereum clients.',
    reference_url: 'https://clients.example.org',
    admin_address: addr('a2', 2),
    admin_profile: 'Bob',
    grant_type: 'tech',
  },
  {
    id: 3,
    title: 'Translations',
    description: 'Docs translated into Spanish.',
    reference_url: 'https://github.com/docs/translations',
    admin_address: addr('a1', 1),
    admin_profile: 'carol',
    grant_type: 'community',
  },
  { id: 4, title: 'Old Linter', description: 'Retired.', admin_address: addr('a4', 4), grant_type: 'tech', active: false },
];

export const roundFixtures = [
  { number: 1, start: '2026-01-01T00:00:00Z', end: '2026-01-15T00:00:00Z' },
  { number: 2, start: '2026-02-01T00:00:00Z', end: '2026-02-15T00:00:00Z' },
];

const contribution = (id: number, grant: number, round: number | null, address: string, contributor: string | null, extra = {}) => ({
  id,
  grant,
  ...(round === null ? {} : { round }),
  address,
  ...(contributor === null ? {} : { contributor }),
  amount: '10',
  token: 'DAI',
  created_on: `2026-01-${String(id).padStart(2, '0')}T12:00:00Z`,
  ...extra,
});

/** X1..X6 = wallet(1..6); X2 belongs to dave, who opted out. */
export const contributionFixtures = [
  contribution(1, 1, 1, wallet(1), 'erin', { comment: 'first!' }),
  contribution(2, 1, 1, wallet(2), 'dave'),
  contribution(3, 1, 2, wallet(3), null),
  contribution(4, 2, 1, wallet(1), 'erin'),
  contribution(5, 2, 2, wallet(4), 'frank', { anonymized: true, comment: 'keep me anonymous' }),
  contribution(6, 1, 1, wallet(1).toUpperCase().replace('0X', '0x'), 'erin'),
  contribution(7, 1, null, wallet(5), null),
  contribution(8, 2, 2, wallet(2), null, { comment: 'from a shared wallet' }),
  contribution(9, 3, 1, wallet(6), 'frank'),
];

export function fullFixture() {
  return {
    profiles: profileFixtures,
    rounds: roundFixtures,
    grants: grantFixtures,
    contributions: contributionFixtures,
    bounties: bountyFixtures(),
  };
}

/** Imports a document and fails the test on any problem. */
export async function importOk(ctx: AppContext, document: unknown) {
  const result = await ctx.publicData.imports.importDocument(document, 'fixture');
  if (result.problems.length > 0) throw new Error(`fixture problems: ${JSON.stringify(result.problems)}`);
  return result;
}

/** Empties the public data tables and the response cache (cheaper than a new app per test). */
export async function resetPublicData(ctx: AppContext) {
  const db = ctx.database.db;
  for (const table of ['export_credentials', 'grant_team_members', 'contributions', 'bounties', 'grants', 'grant_rounds', 'profiles'] as const) {
    await db.deleteFrom(table).execute();
  }
  await ctx.publicData.cache.invalidate(['']);
}
