import type { ExpressionBuilder, Kysely } from 'kysely';
import type { StakeEvent } from '../chain/staking-contract.js';
import { type Database, writeTransaction } from '../db/connection.js';
import type { Tables } from '../db/tables/index.js';
import type { StakeEventsTable } from '../db/tables/staking.js';

export type StakeEventRow = Omit<StakeEventsTable, 'id'>;

/** A stored event as the per-round route shows it. */
export type StoredStakeEvent = Omit<StakeEventsTable, 'id'> & { id: number };

/** The amounts of one address's events, as stored (decimal text), for the domain to sum. */
export interface StakeAmountRow {
  round_id: string;
  amount: string;
  staked: number;
}

// 12 columns a row: 100 rows stay far below SQLite's bound-parameter limit.
const CHUNK = 100;

const keyOf = (txHash: string, logIndex: number) => `${txHash}:${logIndex}`;

/** The stored form of an event. */
export function stakeEventRow(event: StakeEvent, source: StakeEventRow['source'], now: number, contract: string | null = null): StakeEventRow {
  return {
    tx_hash: event.txHash,
    log_index: event.logIndex,
    block_number: event.blockNumber,
    type: event.type,
    round_id: event.roundId.toString(),
    staker: event.staker,
    user_address: event.user,
    amount: event.amount.toString(),
    staked: event.staked ? 1 : 0,
    source,
    created_at: now,
    contract_address: contract,
  };
}

/** Inserts the events that are not stored yet; returns the keys (`txHash:logIndex`) it inserted. */
async function insertNew(db: Kysely<Tables>, events: StakeEvent[], source: StakeEventRow['source'], now: number, contract: string | null): Promise<Set<string>> {
  const inserted = new Set<string>();
  for (let i = 0; i < events.length; i += CHUNK) {
    const rows = events.slice(i, i + CHUNK).map((e) => stakeEventRow(e, source, now, contract));
    const done = await db
      .insertInto('stake_events')
      .values(rows)
      .onConflict((oc) => oc.columns(['tx_hash', 'log_index']).doNothing())
      .returning(['tx_hash', 'log_index'])
      .execute();
    for (const row of done) inserted.add(keyOf(row.tx_hash, row.log_index));
  }
  return inserted;
}

/**
 * The event store. `contract` is the configured staking contract (lower case, or null when none
 * is): imported events are recorded as its events, and the reads (totals, a round's events) count
 * only its events and those of unknown contract, never another contract's. With no contract
 * configured every stored event counts.
 */
export function stakeEventsRepository(database: Database, contract: string | null = null) {
  const { db } = database;
  const configured = contract?.toLowerCase() ?? null;
  /** Rows of the configured contract or of unknown contract (applied only when a contract is configured). */
  const ofContract = (eb: ExpressionBuilder<Tables, 'stake_events'>) =>
    eb.or([eb('contract_address', '=', configured), eb('contract_address', 'is', null)]);
  return {
    keyOf,

    /**
     * Stores the events of blocks up to `lastBlock` and moves the contract's cursor
     * there, in one transaction: a crash leaves either both or neither. The cursor
     * never moves backwards (a re-scan of old blocks or a slower second indexer
     * cannot undo progress). Returns how many events were new.
     */
    async storeIndexed(contract: string, events: StakeEvent[], lastBlock: number, now: number): Promise<number> {
      return writeTransaction(database, async (trx) => {
        const inserted = await insertNew(trx, events, 'chain', now, contract.toLowerCase());
        await trx
          .insertInto('staking_cursors')
          .values({ contract_address: contract, last_block: lastBlock, updated_at: now })
          .onConflict((oc) =>
            oc
              .column('contract_address')
              .doUpdateSet({ last_block: lastBlock, updated_at: now })
              .where('staking_cursors.last_block', '<', lastBlock),
          )
          .execute();
        return inserted.size;
      });
    },

    /** The last block whose logs are stored for this contract, or null before the first run. */
    async cursor(contract: string): Promise<number | null> {
      const row = await db.selectFrom('staking_cursors').select('last_block').where('contract_address', '=', contract).executeTakeFirst();
      return row ? Number(row.last_block) : null;
    },

    /**
     * Stores imported events in one transaction. Returns the keys inserted and,
     * for the others, what is already stored under their key (to tell a repeat
     * from a conflicting record).
     */
    async storeImported(events: StakeEvent[], now: number): Promise<{ inserted: Set<string>; existing: Map<string, StakeEventRow> }> {
      return writeTransaction(database, async (trx) => {
        const inserted = await insertNew(trx, events, 'import', now, configured);
        const existing = new Map<string, StakeEventRow>();
        const others = events.filter((e) => !inserted.has(keyOf(e.txHash, e.logIndex)));
        for (let i = 0; i < others.length; i += CHUNK) {
          const hashes = [...new Set(others.slice(i, i + CHUNK).map((e) => e.txHash))];
          const rows = await trx.selectFrom('stake_events').selectAll().where('tx_hash', 'in', hashes).execute();
          for (const row of rows) existing.set(keyOf(row.tx_hash, row.log_index), { ...row, block_number: Number(row.block_number) });
        }
        return { inserted, existing };
      });
    },

    /** The events of one round in which `address` staked or was staked on, oldest first (chain order). */
    async eventsOfRound(address: string, roundId: string): Promise<StoredStakeEvent[]> {
      const rows = await db.selectFrom('stake_events').selectAll().$if(configured !== null, (q) => q.where(ofContract))
        .where('round_id', '=', roundId)
        .where((eb) => eb.or([eb('staker', '=', address), eb('user_address', '=', address)]))
        .orderBy('block_number')
        .orderBy('log_index')
        .orderBy('tx_hash')
        .execute();
      return rows.map((row) => ({ ...row, id: Number(row.id), block_number: Number(row.block_number) }));
    },

    /** Self stakes of `address` (it staked on itself). */
    async selfStakesOf(address: string): Promise<StakeAmountRow[]> {
      return db.selectFrom('stake_events').select(['round_id', 'amount', 'staked']).$if(configured !== null, (q) => q.where(ofContract))
        .where('staker', '=', address)
        .where('type', '=', 'selfStake')
        .execute();
    },

    /** Community stakes others placed on `address`. */
    async communityStakesOn(address: string): Promise<StakeAmountRow[]> {
      return db.selectFrom('stake_events').select(['round_id', 'amount', 'staked']).$if(configured !== null, (q) => q.where(ofContract))
        .where('user_address', '=', address)
        .where('type', '=', 'xStake')
        .execute();
    },
  };
}

export type StakeEventsRepository = ReturnType<typeof stakeEventsRepository>;
