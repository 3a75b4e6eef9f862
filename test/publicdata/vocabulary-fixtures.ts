import { addr, bountyFixtures } from './fixtures.js';

/**
 * The six bounties of fixtures.ts with the original service's vocabulary
 * fields: values vary per bounty, some are absent (null) so that orders show
 * where nulls go, and bounty 6 is open but past its expiry date.
 */
const t = (day: number) => `2026-02-${String(day).padStart(2, '0')}T10:00:00Z`;
const columns: Record<string, unknown[]> = {
  network: ['mainnet', 'rinkeby', 'mainnet', null, 'xdai', 'mainnet'],
  standard_bounties_id: [101, 7, 55, null, 3000, 12],
  bounty_owner_github_username: ['Alice', 'bob', 'alice', 'Carol', null, 'BOB'],
  interested: [['dev1', 'Dev2'], [], ['dev2'], null, ['dev3', 'dev1', 'dev4'], ['DEV1']],
  fulfillments: [null, [{ fulfiller_github_username: 'dev2' }], [{ fulfiller_github_username: 'Dev3', accepted: true }], null, null, [{ fulfiller_github_username: 'dev1' }, { fulfiller_github_username: 'erin' }]],
  raw_data: [{ keywords: 'Solidity,gas' }, { keywords: 'rust' }, 'plain text GAS report', null, { nested: { k: 'solidity' } }, ['docs', 'Gas']],
  web3_type: ['bounties_network', 'legacy_gitcoin', null, 'bounties_network', 'Bounties_network', 'legacy_gitcoin'],
  github_comments: [5, 0, null, 12, 3, 5],
  bounty_owner_name: ['Zed', 'anna', 'Ben', null, 'ben', 'Anna'],
  contract_address: [addr('c0', 3), addr('c0', 1), null, addr('c0', 2), addr('c0', 1), addr('c0', 9)],
  issue_description: ['fix it', 'Add docs', null, 'audit', 'zzz', 'Add tests'],
  num_fulfillments: [0, 1, 1, 1, null, 2],
  balance: ['10', '9.5', null, '1000', '0.01', '10.0'],
  accepted: [false, false, true, true, null, false],
  interested_comment: [900, null, 12, 5, 77, 900],
  submissions_comment: [50, 60, null, 1, 2, 3],
  override_status: [null, 'hold', '', 'Hold', 'archived', null],
  last_comment_date: [t(3), t(1), null, t(9), t(2), t(1)],
  fulfillment_accepted_on: [null, null, null, t(10), null, t(9)],
  fulfillment_submitted_on: [null, null, t(5), t(8), null, t(4)],
  fulfillment_started_on: [null, t(1), t(2), t(1), null, '2026-01-30T00:00:00Z'],
  canceled_on: [null, null, null, null, t(20), null],
  snooze_warnings_for_days: [0, 3, null, 0, 14, 7],
  token_value_time_peg: [t(1), t(1), null, t(2), t(3), '2026-01-01T00:00:00Z'],
  token_value_in_usdt: ['3000.5', '2999', null, '3100', '3000.50', '12'],
  value_true: ['0.5', '1.25', '0.1', null, '2', '0.75'],
  privacy_preferences: [{ a: 1 }, {}, null, { b: true }, { a: 0 }, { a: 1 }],
  bounty_owner_email: ['b@x.org', 'a@x.org', '', 'C@x.org', 'a@x.org', ''],
  metadata: [{ k: 2 }, { k: 1 }, {}, { z: 1 }, { a: 1 }, {}],
  current_bounty: [true, true, false, true, false, true],
  token_address: [addr('d0', 2), null, addr('d0', 1), addr('d0', 2), addr('d0', 3), null],
  value_in_usdt: ['1500', null, '300.5', '20', '6000', '2250'],
  value_in_usdt_now: [null, '3000', '301', '25', null, '2000'],
};

export function vocabularyFixtures() {
  return bountyFixtures().map((bounty, i) => {
    const extra = Object.fromEntries(Object.entries(columns).flatMap(([field, values]) => (values[i] === null ? [] : [[field, values[i]]])));
    return { ...bounty, ...extra, ...(bounty.id === 6 ? { expires_date: '2026-01-15T00:00:00Z' } : {}) };
  });
}
