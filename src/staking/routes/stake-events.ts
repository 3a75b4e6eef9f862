import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { typed } from '../../http/typebox.js';
import { errorResponses } from '../../http/errors.js';
import { type BudgetCounters, registerIpRateLimit } from '../../http/rate-limit.js';
import { AddressSchema } from '../../http/schemas.js';
import type { StakeEventsRepository, StoredStakeEvent } from '../stake-events.repository.js';

const StakeEventItem = Type.Object(
  {
    id: Type.Integer({ description: 'This service’s number of the stored event.' }),
    event_type: Type.Union([Type.Literal('SelfStake'), Type.Literal('Xstake')]),
    round_id: Type.Integer(),
    staker: Type.String({ description: 'The address that staked (or unstaked), lower-case.' }),
    address: Type.String({ description: 'The address staked on, lower-case; equals `staker` for a self stake.' }),
    amount: Type.String({ pattern: '^[0-9]+$', description: 'Amount in wei, as a decimal string.' }),
    staked: Type.Boolean({ description: 'false: an unstake of `amount`.' }),
    block_number: Type.Integer(),
    tx_hash: Type.String(),
  },
  { title: 'StakeEvent' },
);

export const StakeEventsSchema = Type.Object(
  { results: Type.Array(StakeEventItem, { description: 'Oldest first (chain order); empty for an unknown round or no events.' }) },
  { title: 'StakeEvents' },
);

const RoundId = Type.String({ pattern: '^[0-9]{1,78}$', description: 'Round id: a non-negative integer.' });

export function stakeEventItem(event: StoredStakeEvent) {
  return {
    id: event.id,
    event_type: event.type === 'selfStake' ? ('SelfStake' as const) : ('Xstake' as const),
    round_id: Number(event.round_id),
    staker: event.staker,
    address: event.user_address ?? event.staker,
    amount: event.amount,
    staked: event.staked === 1,
    block_number: event.block_number,
    tx_hash: event.tx_hash,
  };
}

/**
 * `GET /registry/{token}-stake/{address}/{round_id}` and `govtoken-stake`: the raw staking events
 * of one round. No API key, as in the reference service; its own per-client-address budget instead.
 */
/** What the stake-events route uses. */
export interface StakeEventRouteDeps {
  events: Pick<StakeEventsRepository, 'eventsOfRound'>;
  governanceToken: string;
  /** STAKE_EVENTS_RATE_LIMIT_PER_MINUTE: the per-client-address budget. */
  perMinute: number;
  counters: BudgetCounters;
}

export async function stakeEventRoutes(instance: FastifyInstance, deps: StakeEventRouteDeps): Promise<void> {
  const app = typed(instance);
  await registerIpRateLimit(app, {
    name: 'stake-events',
    max: deps.perMinute,
    windowMs: 60_000,
    redis: deps.counters.redis,
    redisWatch: deps.counters.redisWatch,
    onRejected: () => deps.counters.onRejected?.('stake_events'),
  });
  const tokens = [...new Set([deps.governanceToken, 'govtoken'])];
  for (const token of tokens) {
    app.get(
      `/registry/${token}-stake/:address/:round_id`,
      {
        schema: {
          tags: ['scoring'],
          summary:
            token === 'govtoken'
              ? 'Staking events of an address in one round (token-neutral path)'
              : `Staking events of an address in one round (${token.toUpperCase()})`,
          description:
            'Every stored self stake and community stake event of the round in which the address staked or was staked on, ' +
            'oldest first. No API key; limited to STAKE_EVENTS_RATE_LIMIT_PER_MINUTE requests per minute per client address.',
          security: [],
          params: Type.Object({ address: AddressSchema, round_id: RoundId }),
          response: { 200: StakeEventsSchema, ...errorResponses(400, 429) },
        },
      },
      async (request) => {
        // Stored round ids are canonical decimal text, so "007" asks for round 7.
        const round = BigInt(request.params.round_id).toString();
        const events = await deps.events.eventsOfRound(request.params.address.toLowerCase(), round);
        return { results: events.map(stakeEventItem) };
      },
    );
  }
}
