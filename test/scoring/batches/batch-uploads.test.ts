import { type ClientRequest, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { statementsOf } from '../../helpers/statement-log.js';
import { createTestApp, seedAccount, type TestApp } from '../../helpers/app.js';
import { databaseKinds } from '../../helpers/databases.js';
import { waitFor, withTimeout } from '../../helpers/processes.js';
import { uploadInsertRows } from '../../../src/scoring/batches/batch-uploads.repository.js';

const addressNo = (n: number) => '0x' + n.toString(16).padStart(40, '0');
const addresses = (count: number) => Array.from({ length: count }, (_, i) => addressNo(i + 1));

interface OpenUpload {
  req: ClientRequest;
  answer: Promise<{ status: number; body: string }>;
}

/** A batch upload over a real connection whose body is sent piece by piece; `req.end()` finishes it. */
function openUpload(base: string, key: string, scorerId: number, contentType: string, first: string): OpenUpload {
  const url = new URL(`/v2/scorers/${scorerId}/batches`, base);
  let req!: ClientRequest;
  const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
    req = request(url, { method: 'POST', headers: { 'x-api-key': key, 'content-type': contentType } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    // The server may close the connection under a body it refused: the answer is what counts.
    req.on('error', reject);
  });
  req.write(first);
  return { req, answer };
}

const count = async (t: TestApp, table: 'batch_items' | 'batches' | 'batch_uploads' | 'batch_chunks') =>
  Number((await t.ctx.database.db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);

describe.each(databaseKinds)('batch uploads on %s', (kind) => {
  let t: TestApp;
  let base: string;
  let seeded: Awaited<ReturnType<typeof seedAccount>>;
  const open: ClientRequest[] = [];
  const today = () => new Date().toISOString().slice(0, 10);

  beforeEach(async () => {
    // Tier 1: 20,000 addresses a day; tier 2: 20.
    t = await createTestApp(kind, { BATCH_DAILY_ADDRESSES: '20000,20,40,50', BATCH_UPLOADS_PER_ACCOUNT: '2', BATCH_CHUNK_SIZE: '100' });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    seeded = await seedAccount(t.ctx);
  });
  afterEach(async () => {
    for (const req of open.splice(0)) req.destroy();
    await t.close();
  });

  const post = (payload: unknown, key = seeded.key, scorerId = seeded.scorer.id) =>
    t.app.inject({
      method: 'POST',
      url: `/v2/scorers/${scorerId}/batches`,
      headers: { 'x-api-key': key, ...(typeof payload === 'string' ? { 'content-type': 'text/csv' } : {}) },
      payload: payload as string,
    });

  it(`writes a large batch in steps of ${uploadInsertRows} items, each in a transaction of its own, the batch row and its chunks in the last one`, async () => {
    const total = 2 * uploadInsertRows + 200;
    const { result: created, statements } = await statementsOf(() => post({ addresses: addresses(total) }));
    expect(created.statusCode, created.body).toBe(202);
    // The transactions of the upload, in order, by what they inserted.
    const transactions: string[][] = [];
    let current: string[] | null = null;
    for (const statement of statements) {
      if (/^(begin|start transaction)/.test(statement)) current = [];
      else if (/^(commit|rollback)/.test(statement)) {
        if (current) transactions.push(current);
        current = null;
      } else current?.push(statement);
    }
    const itemSteps = transactions.filter((tx) => tx.some((s) => s.startsWith('insert into "batch_items"')));
    expect(itemSteps).toHaveLength(Math.ceil(total / uploadInsertRows));
    const last = transactions.findIndex((tx) => tx.some((s) => s.startsWith('insert into "batches"')));
    expect(last).toBeGreaterThan(transactions.indexOf(itemSteps.at(-1)!));
    expect(transactions[last]!.some((s) => s.startsWith('insert into "batch_chunks"'))).toBe(true);
    expect(transactions[last]!.some((s) => s.startsWith('delete from "batch_uploads"'))).toBe(true);

    const id = created.json().id;
    expect((await t.app.inject({ url: `/v2/batches/${id}`, headers: { 'x-api-key': seeded.key } })).json()).toMatchObject({ status: 'PENDING', total });
    expect(await count(t, 'batch_items')).toBe(total);
    expect(await count(t, 'batch_chunks')).toBe(Math.ceil(total / 100));
    expect(await count(t, 'batch_uploads')).toBe(0);
    expect(await t.ctx.batches.repo.usage(seeded.account.id, today())).toBe(total);
  });

  it.each([
    ['CSV', 'text/csv', `address\n${addressNo(1)}\nnot-an-address\n`, 'Line 3'],
    ['JSON', 'application/json', `{"addresses":["${addressNo(1)}",17,`, 'addresses[1]'],
  ])('refuses a %s body at its first bad address, before the rest of the body is sent', async (_name, type, first, named) => {
    const upload = openUpload(base, seeded.key, seeded.scorer.id, type, first);
    open.push(upload.req);
    // The body never ends: only an answer given before its end arrives.
    const answer = await withTimeout(upload.answer, 10_000, 'the refusal of the open body');
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toEqual({ code: 'invalid_address', detail: expect.stringContaining(named) });
    expect(await count(t, 'batch_items')).toBe(0);
  });

  it('refuses the address past the quota left today with 429 while the body is still being sent, spending nothing', async () => {
    const small = await seedAccount(t.ctx, { tier: 2 });
    const upload = openUpload(base, small.key, small.scorer.id, 'text/csv', `${addresses(21).join('\n')}\n`);
    open.push(upload.req);
    const answer = await withTimeout(upload.answer, 10_000, 'the quota refusal of the open body');
    expect(answer.status).toBe(429);
    expect(JSON.parse(answer.body)).toMatchObject({ code: 'batch_quota_exceeded' });
    expect(await count(t, 'batch_items')).toBe(0);
    expect(await t.ctx.batches.repo.usage(small.account.id, today())).toBe(0);
    // Exactly the quota still fits.
    expect((await post(addresses(20).join('\n'), small.key, small.scorer.id)).statusCode).toBe(202);
  });

  it('an invalid last address of a large body writes nothing and spends no quota', async () => {
    const list: string[] = addresses(5000);
    list[4999] = '0x1234';
    const refused = await post({ addresses: list });
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toEqual({ code: 'invalid_address', detail: expect.stringContaining('addresses[4999]') });
    for (const table of ['batch_items', 'batches', 'batch_uploads', 'batch_chunks'] as const) expect(await count(t, table)).toBe(0);
    expect(await t.ctx.batches.repo.usage(seeded.account.id, today())).toBe(0);
  });

  it('refuses an account\'s third upload under way with 429 too_many_batch_uploads, not another account\'s, and frees the slot when one is answered', async () => {
    const first = openUpload(base, seeded.key, seeded.scorer.id, 'text/csv', `address\n${addressNo(1)}\n`);
    const second = openUpload(base, seeded.key, seeded.scorer.id, 'text/csv', `address\n${addressNo(2)}\n`);
    open.push(first.req, second.req);
    await waitFor('two uploads under way', 10_000, () => t.ctx.batches.uploads.openOf(seeded.account.id) === 2, 10);

    const third = await post(`${addressNo(3)}\n`);
    expect(third.statusCode).toBe(429);
    expect(third.json()).toEqual({ code: 'too_many_batch_uploads', detail: expect.stringContaining('BATCH_UPLOADS_PER_ACCOUNT=2') });
    expect(third.headers['retry-after']).toBe('1');
    const other = await seedAccount(t.ctx);
    expect((await post(`${addressNo(3)}\n`, other.key, other.scorer.id)).statusCode).toBe(202);

    first.req.end(`${addressNo(4)}\n`);
    expect((await first.answer).status).toBe(202);
    await waitFor('the answered upload\'s slot', 10_000, () => t.ctx.batches.uploads.openOf(seeded.account.id) === 1, 10);
    expect((await post(`${addressNo(5)}\n`)).statusCode).toBe(202);
    second.req.end();
    expect((await second.answer).status).toBe(202);
  });
});
