/**
 * The push tables on both databases: the sender's nonce counter hands out consecutive nonces to
 * items signed at the same time (none twice, none skipped), is raised but never lowered by the
 * chain's count, and a score event's claim makes a second item of it `skipped` without a nonce.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/connection.js';
import { pushRepository, type PushRepository } from '../../src/onchain/push.repository.js';
import { databaseKinds, openMigratedTestDatabase, type TestDatabase } from '../helpers/databases.js';

const sender = `0x${'5e'.repeat(20)}`;
const addressNo = (n: number) => `0x${n.toString(16).padStart(40, '0')}`;

describe.each(databaseKinds)('the push repository on %s', (kind) => {
  let test: TestDatabase;
  let database: Database;
  let repo: PushRepository;

  beforeAll(async () => {
    ({ test, database } = await openMigratedTestDatabase(kind));
    repo = pushRepository(database);
  });
  afterAll(async () => {
    await database?.close();
    await test?.drop();
  });

  const signer = (nonce: number) => Promise.resolve({ rawTx: `0xraw${nonce}`, txHash: `0xhash${nonce}` });

  it('gives items signed at once consecutive nonces from the chain\'s count, and is never lowered', async () => {
    const addresses = Array.from({ length: 12 }, (_, i) => addressNo(i + 1));
    const job = await repo.create({ chainId: 10, scorerId: 1, accountId: 1, sender, addresses, now: 1 });
    await repo.reconcileNonce(10, sender, 7);
    await repo.reconcileNonce(10, sender, 3);
    const stored = await Promise.all(addresses.map((address, position) => repo.storeSigned(job, { position, address }, 100 + position, 2, signer)));
    const nonces = stored.map((s) => (s === 'taken' ? -1 : s.nonce)).sort((a, b) => a - b);
    expect(nonces).toEqual(Array.from({ length: 12 }, (_, i) => 7 + i));
    const items = await repo.items(job.id, 0, 100);
    expect(items.every((item) => item.state === 'sent' && item.raw_tx === `0xraw${item.sender_nonce}` && item.tx_hash === `0xhash${item.sender_nonce}`)).toBe(true);
    await repo.reconcileNonce(10, sender, 25);
    const later = await repo.create({ chainId: 10, scorerId: 1, accountId: 1, sender, addresses: [addressNo(99)], now: 3 });
    expect(await repo.storeSigned(later, { position: 0, address: addressNo(99) }, 500, 4, signer)).toEqual({ nonce: 25, signed: { rawTx: '0xraw25', txHash: '0xhash25' } });
  });

  it('skips a second item of an already sent score event without taking a nonce, and frees the claim when the send failed', async () => {
    const address = addressNo(1000);
    await repo.reconcileNonce(20, sender, 0);
    const first = await repo.create({ chainId: 20, scorerId: 2, accountId: 1, sender, addresses: [address], now: 1 });
    const second = await repo.create({ chainId: 20, scorerId: 2, accountId: 1, sender, addresses: [address], now: 2 });
    expect(await repo.storeSigned(first, { position: 0, address }, 42, 3, signer)).toEqual({ nonce: 0, signed: { rawTx: '0xraw0', txHash: '0xhash0' } });
    expect(await repo.alreadySent(20, 2, address, 42)).toBe(true);
    expect(await repo.storeSigned(second, { position: 0, address }, 42, 4, signer)).toBe('taken');
    expect((await repo.items(second.id, 0, 1))[0]).toMatchObject({ state: 'skipped', score_event_id: 42, sender_nonce: null });

    const [sent] = await repo.items(first.id, 0, 1);
    await repo.markFailed(first, sent!, 'UnknownSigner', 5);
    expect(await repo.alreadySent(20, 2, address, 42)).toBe(false);
    expect((await repo.items(first.id, 0, 1))[0]).toMatchObject({ state: 'failed', reason: 'UnknownSigner' });
    const third = await repo.create({ chainId: 20, scorerId: 2, accountId: 1, sender, addresses: [address], now: 6 });
    expect(await repo.storeSigned(third, { position: 0, address }, 42, 7, signer)).toEqual({ nonce: 1, signed: { rawTx: '0xraw1', txHash: '0xhash1' } });
  });

  it('leases a job to one worker at a time, and to another once the lease ran out', async () => {
    const otherSender = `0x${'77'.repeat(20)}`;
    const job = await repo.create({ chainId: 30, scorerId: 3, accountId: 1, sender: otherSender, addresses: [addressNo(5)], now: 10 });
    const [a, b] = await Promise.all([repo.claimJob('a', otherSender, 100, 1000), repo.claimJob('b', otherSender, 100, 1000)]);
    expect([a?.id, b?.id].filter(Boolean)).toEqual([job.id]);
    expect(await repo.claimJob('c', otherSender, 500, 1000)).toBeUndefined();
    expect((await repo.claimJob('c', otherSender, 1200, 1000))?.id).toBe(job.id);
    expect(await repo.renewLease(job.id, a ? 'a' : 'b', 2000)).toBe(false);
    expect(await repo.claimJob('d', sender, 5000, 1000)).not.toEqual(expect.objectContaining({ id: job.id }));
  });
});
