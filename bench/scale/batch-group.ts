/**
 * The batch group of the scale data set: fresh addresses (an address range of their own, never
 * scored) holding 20 stored stamps each, which the batch case scores as a batch of a new scorer
 * on every run (so every run measures first scorings). Their rows are the generator's stamp rows,
 * as the set's addresses' are: stored stamps are never verified again, so a restated credential is
 * what the service would have stored.
 */
import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import { DAY_MS, providersOf, restatedCredential, stampRow, type StampRow } from './generator.js';

/** Stamps per address of the batch group: the batch target is stated for 20. */
export const BATCH_STAMPS = 20;
/** The batch target is stated for 100 000 addresses, whatever the set's size. */
export const DEFAULT_BATCH_ADDRESSES = 100_000;
const CHUNK_ADDRESSES = 500;

export function batchAddress(j: number): string {
  return `0x${createHash('sha256').update(`scale-batch-address:${j}`).digest('hex').slice(0, 40)}`;
}

/**
 * The stamps of batch address j, ids after `firstId`. Valid from 10 days before the build for a
 * year: a set reused for months still scores them with every stamp counted.
 */
export function batchAddressStamps(j: number, firstId: number, builtAt: number, templates: ReadonlyMap<string, unknown>): StampRow[] {
  const address = batchAddress(j);
  const storedAt = builtAt - DAY_MS;
  const issuedAt = Math.floor((builtAt - 10 * DAY_MS) / 1000) * 1000;
  return providersOf(j, [...templates.keys()], BATCH_STAMPS).map((provider, k) => {
    const nullifier = `v0:${provider}:${address}:${createHash('sha256').update(`scale-batch-nullifier:${j}:${provider}`).digest('hex')}`;
    const credential = restatedCredential(templates.get(provider), address, nullifier, issuedAt, issuedAt + 365 * DAY_MS);
    return stampRow(firstId + j * BATCH_STAMPS + k + 1, credential, address, storedAt);
  });
}

/** Writes the batch group's stamps in chunks, each chunk one transaction. */
export async function writeBatchGroup(
  db: Kysely<any>,
  addresses: number,
  firstId: number,
  builtAt: number,
  templates: ReadonlyMap<string, unknown>,
  insertRows: (db: Kysely<any>, table: string, rows: object[]) => Promise<void>,
  log: (line: string) => void,
): Promise<void> {
  const started = performance.now();
  for (let from = 0; from < addresses; from += CHUNK_ADDRESSES) {
    const rows: StampRow[] = [];
    for (let j = from; j < Math.min(addresses, from + CHUNK_ADDRESSES); j++) rows.push(...batchAddressStamps(j, firstId, builtAt, templates));
    await db.transaction().execute((trx) => insertRows(trx, 'stamps', rows));
    if ((from / CHUNK_ADDRESSES) % 40 === 0) log(`  batch group: ${Math.min(addresses, from + CHUNK_ADDRESSES)} of ${addresses} addresses, ${Math.round((performance.now() - started) / 1000)} s`);
  }
}
