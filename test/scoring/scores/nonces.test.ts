import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/connection.js';
import { AppError } from '../../../src/errors.js';
import { nonceService, signingMessageFor } from '../../../src/scoring/scores/nonces.service.js';
import { noncesRepository } from '../../../src/scoring/scores/nonces.repository.js';
import { databaseKinds, openMigratedTestDatabase, type TestDatabase } from '../../helpers/databases.js';

describe.each(databaseKinds)('nonces on %s', (kind) => {
  let test: TestDatabase;
  let database: Database;
  let now: number;
  let nonces: ReturnType<typeof nonceService>;

  beforeEach(async () => {
    ({ test, database } = await openMigratedTestDatabase(kind));
    now = Date.UTC(2026, 10, 21);
    nonces = nonceService(noncesRepository(database.db), 600, () => now);
  });
  afterEach(async () => {
    await database.close();
    await test.drop();
  });

  it('issues a random 256-bit hex nonce inside a message line "Nonce: …"', async () => {
    const a = await nonces.issue(1);
    const b = await nonces.issue(1);
    expect(a.nonce).toMatch(/^[0-9a-f]{64}$/);
    expect(a.nonce).not.toBe(b.nonce);
    expect(a.message.split('\n')).toContain(`Nonce: ${a.nonce}`);
    expect(a.message).toBe(signingMessageFor(a.nonce));
  });

  it('is consumed once, after the check passes, and never again', async () => {
    const { nonce, message } = await nonces.issue(1);
    let seen = '';
    await nonces.consume(nonce, 1, (m) => {
      seen = m;
    });
    expect(seen).toBe(message);
    await expect(nonces.consume(nonce, 1, () => {})).rejects.toMatchObject({ code: 'invalid_nonce' });
  });

  it('stays usable when the signature check fails', async () => {
    const { nonce } = await nonces.issue(1);
    const failing = () => {
      throw new AppError('invalid_signature', 'no');
    };
    await expect(nonces.consume(nonce, 1, failing)).rejects.toMatchObject({ code: 'invalid_signature' });
    await expect(nonces.consume(nonce, 1, () => {})).resolves.toBeUndefined();
  });

  it('belongs to the account it was issued to: another account cannot consume it, and leaves it usable', async () => {
    const { nonce } = await nonces.issue(1);
    let checked = false;
    await expect(
      nonces.consume(nonce, 2, () => {
        checked = true;
      }),
    ).rejects.toMatchObject({ code: 'invalid_nonce' });
    expect(checked).toBe(false);
    await expect(nonces.consume(nonce, 1, () => {})).resolves.toBeUndefined();
  });

  it('expires after its time to live', async () => {
    const { nonce } = await nonces.issue(1);
    now += 600_000;
    await expect(nonces.consume(nonce, 1, () => {})).rejects.toMatchObject({ code: 'invalid_nonce' });
  });

  it('refuses missing, malformed and unknown nonces', async () => {
    await expect(nonces.consume(undefined, 1, () => {})).rejects.toMatchObject({ code: 'invalid_nonce' });
    await expect(nonces.consume("' or 1=1 --", 1, () => {})).rejects.toMatchObject({ code: 'invalid_nonce' });
    await expect(nonces.consume('a'.repeat(64), 1, () => {})).rejects.toMatchObject({ code: 'invalid_nonce' });
  });
});
