/** Which stamps the scoring engine counts, its LIFO deduplication against other addresses, the nullifiers it claims, and its purity. */
import { describe, expect, it } from 'vitest';
import { ADDRESS, OTHER, NOW, daysFromNow, binary, stamp, score, holds } from '../../helpers/engine-input.js';

describe('which stamps count', () => {
  it('ignores stamps the verifier rejected, keeping its reason', () => {
    const rejected = stamp('Google', { valid: false });
    const badProof = stamp('X', { valid: 'proof does not verify' });
    const good = stamp('Linkedin');
    const result = score([rejected, badProof, good]);
    expect(result.rawScore).toBe('1.531');
    expect(result.ignored).toEqual([
      { stampId: rejected.id, provider: 'Google', reason: 'invalid' },
      { stampId: badProof.id, provider: 'X', reason: 'invalid', detail: 'proof does not verify' },
    ]);
    expect(result.claims.map((c) => c.nullifier)).toEqual(good.nullifiers);
  });

  it('ignores stamps expired at `now`, including one expiring exactly then', () => {
    const expired = stamp('Google', { expirationDate: daysFromNow(-1) });
    const expiringNow = stamp('X', { expirationDate: NOW });
    const result = score([expired, expiringNow, stamp('Ens')]);
    expect(result.rawScore).toBe('0.208');
    expect(result.ignored).toEqual([
      { stampId: expired.id, provider: 'Google', reason: 'expired' },
      { stampId: expiringNow.id, provider: 'X', reason: 'expired' },
    ]);
  });

  it('ignores stamps with an unusable issuance date or no nullifier', () => {
    const undated = stamp('Google', { issuanceDate: new Date('not a date') });
    const anonymous = stamp('X', { nullifiers: [] });
    const result = score([undated, anonymous]);
    expect(result.rawScore).toBe('0');
    expect(result.ignored).toEqual([
      { stampId: undated.id, provider: 'Google', reason: 'invalid', detail: 'issuanceDate is not a valid date' },
      { stampId: anonymous.id, provider: 'X', reason: 'no_nullifier' },
    ]);
  });

  it('counts one stamp per provider: the newest', () => {
    const old = stamp('Google', { issuanceDate: daysFromNow(-30) });
    const newest = stamp('Google', { issuanceDate: daysFromNow(-1) });
    const middle = stamp('Google', { issuanceDate: daysFromNow(-5) });
    const result = score([old, newest, middle]);
    expect(result.rawScore).toBe('0.525');
    expect(result.counted).toEqual([{ stampId: newest.id, provider: 'Google', weight: '0.525' }]);
    expect(result.ignored).toEqual([
      { stampId: middle.id, provider: 'Google', reason: 'superseded', detail: newest.id },
      { stampId: old.id, provider: 'Google', reason: 'superseded', detail: newest.id },
    ]);
    expect(result.claims.map((c) => c.nullifier)).toEqual(newest.nullifiers);
  });

  it('breaks issuance ties by later expiry, then smaller id, whatever the input order', () => {
    const issued = daysFromNow(-3);
    const shortLived = stamp('Google', { id: 'a', issuanceDate: issued, expirationDate: daysFromNow(10) });
    const longLived = stamp('Google', { id: 'b', issuanceDate: issued, expirationDate: daysFromNow(20) });
    expect(score([shortLived, longLived]).counted[0]?.stampId).toBe('b');
    expect(score([longLived, shortLived]).counted[0]?.stampId).toBe('b');

    const twinB = stamp('X', { id: 'twin-b', issuanceDate: issued, expirationDate: daysFromNow(20) });
    const twinA = stamp('X', { id: 'twin-a', issuanceDate: issued, expirationDate: daysFromNow(20) });
    expect(score([twinB, twinA]).counted[0]?.stampId).toBe('twin-a');
    expect(score([twinA, twinB]).counted[0]?.stampId).toBe('twin-a');
  });

  it('does not let an expired newer stamp hide an older valid one', () => {
    const older = stamp('Google', { issuanceDate: daysFromNow(-30) });
    const newerExpired = stamp('Google', { issuanceDate: daysFromNow(-1), expirationDate: daysFromNow(-0.5) });
    expect(score([older, newerExpired]).counted).toEqual([{ stampId: older.id, provider: 'Google', weight: '0.525' }]);
  });
});

describe('deduplication against other addresses (LIFO)', () => {
  it('gives nothing for a stamp whose nullifier another address holds', () => {
    const google = stamp('Google');
    const x = stamp('X');
    const result = score([google, x], { holds: holds({ [google.nullifiers[0]!]: { address: OTHER, expiresAt: daysFromNow(5) } }) });
    expect(result.rawScore).toBe('3.2');
    expect(result.deduplicated).toEqual([{ stampId: google.id, provider: 'Google', nullifier: google.nullifiers[0], heldBy: OTHER }]);
    expect(result.claims.map((c) => c.nullifier)).toEqual(x.nullifiers);
  });

  it('deduplicates a stamp with several nullifiers if any one is held elsewhere', () => {
    const google = stamp('Google', { nullifiers: ['v0:n1', 'v1:n2'] });
    const result = score([google], { holds: holds({ 'v1:n2': { address: OTHER, expiresAt: daysFromNow(5) } }) });
    expect(result.rawScore).toBe('0');
    expect(result.deduplicated).toEqual([{ stampId: google.id, provider: 'Google', nullifier: 'v1:n2', heldBy: OTHER }]);
    expect(result.claims).toEqual([]);
  });

  it('counts a stamp whose nullifier the address holds itself, whatever the case of the stored address', () => {
    const google = stamp('Google');
    const result = score([google], {
      holds: holds({ [google.nullifiers[0]!]: { address: ADDRESS.toUpperCase().replace('0X', '0x'), expiresAt: daysFromNow(5) } }),
    });
    expect(result.rawScore).toBe('0.525');
    expect(result.deduplicated).toEqual([]);
  });

  it('compares the scored address case-insensitively too', () => {
    const google = stamp('Google');
    const result = score([google], {
      address: ADDRESS.toUpperCase().replace('0X', '0x'),
      holds: holds({ [google.nullifiers[0]!]: { address: ADDRESS, expiresAt: daysFromNow(5) } }),
    });
    expect(result.rawScore).toBe('0.525');
  });

  it('ignores a hold of another address that has expired, and takes it over', () => {
    const google = stamp('Google');
    const nullifier = google.nullifiers[0]!;
    for (const expiresAt of [daysFromNow(-1), NOW]) {
      const result = score([google], { holds: holds({ [nullifier]: { address: OTHER, expiresAt } }) });
      expect(result.rawScore).toBe('0.525');
      expect(result.claims).toEqual([{ nullifier, expiresAt: google.expirationDate }]);
    }
  });

  it('deduplicates before choosing the newest, so an older unique stamp still counts', () => {
    const olderUnique = stamp('Google', { issuanceDate: daysFromNow(-20) });
    const newerHeld = stamp('Google', { issuanceDate: daysFromNow(-1) });
    const result = score([olderUnique, newerHeld], {
      holds: holds({ [newerHeld.nullifiers[0]!]: { address: OTHER, expiresAt: daysFromNow(30) } }),
    });
    expect(result.counted).toEqual([{ stampId: olderUnique.id, provider: 'Google', weight: '0.525' }]);
    expect(result.deduplicated.map((d) => d.stampId)).toEqual([newerHeld.id]);
    expect(result.claims.map((c) => c.nullifier)).toEqual(olderUnique.nullifiers);
  });

  it('gives a binary scorer the deduplicated sum', () => {
    const govId = stamp('HolonymGovIdProvider');
    const result = score([govId, stamp('Biometrics')], {
      scorer: binary,
      holds: holds({ [govId.nullifiers[0]!]: { address: OTHER, expiresAt: daysFromNow(1) } }),
    });
    expect(result.evidence).toEqual({ type: 'ThresholdScoreCheck', success: false, rawScore: '6.00100', threshold: '20.00000' });
    expect(result.score).toBe('0.00000');
    // A binary scorer reports the weights of what counted too; the deduplicated stamp is not among them.
    expect(result.stampScores).toEqual({ Biometrics: '6.00100' });
    expect(result.expirationDate).toEqual(daysFromNow(80));
  });
});

describe('claims', () => {
  it('claims every nullifier of every counted stamp until that stamp expires, in nullifier order', () => {
    const google = stamp('Google', { nullifiers: ['z-google-v1', 'a-google-v0'], expirationDate: daysFromNow(40) });
    const x = stamp('X', { nullifiers: ['m-x'], expirationDate: daysFromNow(60) });
    expect(score([google, x]).claims).toEqual([
      { nullifier: 'a-google-v0', expiresAt: daysFromNow(40) },
      { nullifier: 'm-x', expiresAt: daysFromNow(60) },
      { nullifier: 'z-google-v1', expiresAt: daysFromNow(40) },
    ]);
  });

  it('claims nothing for ignored, superseded or deduplicated stamps', () => {
    const newest = stamp('Google', { issuanceDate: daysFromNow(-1) });
    const superseded = stamp('Google', { issuanceDate: daysFromNow(-9) });
    const invalid = stamp('X', { valid: false });
    const held = stamp('Ens');
    const result = score([newest, superseded, invalid, held], {
      holds: holds({ [held.nullifiers[0]!]: { address: OTHER, expiresAt: daysFromNow(2) } }),
    });
    expect(result.claims).toEqual([{ nullifier: newest.nullifiers[0], expiresAt: newest.expirationDate }]);
  });

  it('extends a hold the address already has, and never shortens it', () => {
    const google = stamp('Google', { expirationDate: daysFromNow(50) });
    const nullifier = google.nullifiers[0]!;
    const extended = score([google], { holds: holds({ [nullifier]: { address: ADDRESS, expiresAt: daysFromNow(10) } }) });
    expect(extended.claims).toEqual([{ nullifier, expiresAt: daysFromNow(50) }]);
    const kept = score([google], { holds: holds({ [nullifier]: { address: ADDRESS, expiresAt: daysFromNow(70) } }) });
    expect(kept.claims).toEqual([{ nullifier, expiresAt: daysFromNow(70) }]);
  });

  it('holds a nullifier shared by two counted stamps until the later expiry', () => {
    const google = stamp('Google', { nullifiers: ['shared'], expirationDate: daysFromNow(90) });
    const x = stamp('X', { nullifiers: ['shared'], expirationDate: daysFromNow(30) });
    expect(score([google, x]).claims).toEqual([{ nullifier: 'shared', expiresAt: daysFromNow(90) }]);
  });

  it('claims the nullifiers of counted stamps that carry no weight', () => {
    const unknown = stamp('SomeNewProvider');
    expect(score([unknown]).claims).toEqual([{ nullifier: unknown.nullifiers[0], expiresAt: unknown.expirationDate }]);
  });
});

describe('purity', () => {
  it('does not change its input and gives the same result twice', () => {
    const stamps = [stamp('Google', { issuanceDate: daysFromNow(-2) }), stamp('Google', { issuanceDate: daysFromNow(-1) }), stamp('X')];
    const snapshot = structuredClone(stamps);
    const first = score(stamps);
    expect(stamps).toEqual(snapshot);
    expect(score(stamps)).toEqual(first);
  });
});
