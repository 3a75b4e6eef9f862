import { describe, expect, it } from 'vitest';
import { loadCatalogue } from '../../src/scoring/stamps/catalogue.js';
import {
  ScoringInputError,
  computeScore,
  type CandidateStamp,
  type NullifierHold,
  type ScorerSettings,
  type ScoringInput,
} from '../../src/scoring/scorers/engine.js';

const { defaultWeights } = loadCatalogue();

const ADDRESS = '0xaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
const OTHER = '0xbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb';
const NOW = new Date('2026-03-01T12:00:00.000Z');
const DAY = 24 * 60 * 60 * 1000;
const daysFromNow = (days: number): Date => new Date(NOW.getTime() + days * DAY);

const weighted: ScorerSettings = { type: 'weighted', threshold: '20', weights: {} };
const binary: ScorerSettings = { type: 'binary', threshold: '20', weights: {} };

let stampCounter = 0;
function stamp(provider: string, overrides: Partial<CandidateStamp> = {}): CandidateStamp {
  stampCounter += 1;
  return {
    id: `stamp-${stampCounter}`,
    provider,
    nullifiers: [`v0.0.0:${provider}:${stampCounter}`],
    issuanceDate: daysFromNow(-10),
    expirationDate: daysFromNow(80),
    valid: true,
    ...overrides,
  };
}

function score(stamps: CandidateStamp[], options: Partial<ScoringInput> = {}) {
  return computeScore({
    address: ADDRESS,
    scorer: weighted,
    defaultWeights,
    now: NOW,
    stamps,
    holds: new Map(),
    ...options,
  });
}

const holds = (entries: Record<string, NullifierHold>): Map<string, NullifierHold> => new Map(Object.entries(entries));

describe('weighted scorer', () => {
  it('sums the catalogue weights of Google, GitHub and X exactly', () => {
    // 0.525 + 1.879 + 3.2 = 5.604
    const google = stamp('Google');
    const github = stamp('githubContributionActivityGte#30');
    const x = stamp('X');
    const result = score([google, github, x]);
    expect(result.rawScore).toBe('5.604');
    expect(result.score).toBe('5.60400');
    expect(result.evidence).toBeNull();
    expect(result.counted).toEqual([
      { stampId: google.id, provider: 'Google', weight: '0.525' },
      { stampId: x.id, provider: 'X', weight: '3.2' },
      { stampId: github.id, provider: 'githubContributionActivityGte#30', weight: '1.879' },
    ]);
    expect(result.deduplicated).toEqual([]);
    expect(result.ignored).toEqual([]);
  });

  it('reports each counted stamp’s weight with five digits and the earliest expiry among them', () => {
    const google = stamp('Google', { expirationDate: daysFromNow(30) });
    const x = stamp('X', { expirationDate: daysFromNow(10) });
    const olderGoogle = stamp('Google', { issuanceDate: daysFromNow(-20), expirationDate: daysFromNow(2) });
    const expired = stamp('Discord', { expirationDate: daysFromNow(-1) });
    const result = score([google, x, olderGoogle, expired], { scorer: { ...weighted, weights: { X: '3.123456' } } });
    // The superseded Google stamp and the expired Discord stamp count for nothing, so their expiries do not matter.
    expect(result.stampScores).toEqual({ Google: '0.52500', X: '3.12346' });
    expect(result.expirationDate).toEqual(daysFromNow(10));
  });

  it('keeps a provider named like an Object.prototype member as an ordinary key', () => {
    const result = score([stamp('__proto__'), stamp('constructor')], {
      scorer: { ...weighted, weights: JSON.parse('{"__proto__":"1","constructor":"2"}') as Record<string, string> },
    });
    expect(Object.keys(result.stampScores)).toEqual(['__proto__', 'constructor']);
    expect(JSON.parse(JSON.stringify(result.stampScores))).toEqual(JSON.parse('{"__proto__":"1.00000","constructor":"2.00000"}'));
  });

  it('counts each tier of a platform as its own provider', () => {
    // 1.879 + 1.888 + 2.259 + 0.516 + 1.531 = 8.073
    const result = score([
      stamp('githubContributionActivityGte#30'),
      stamp('githubContributionActivityGte#60'),
      stamp('githubContributionActivityGte#120'),
      stamp('Discord'),
      stamp('Linkedin'),
    ]);
    expect(result.rawScore).toBe('8.073');
    expect(result.score).toBe('8.07300');
  });

  it('scores no stamps as zero', () => {
    expect(score([])).toEqual({
      rawScore: '0',
      score: '0.00000',
      evidence: null,
      counted: [],
      stampScores: {},
      expirationDate: null,
      deduplicated: [],
      ignored: [],
      claims: [],
      rawScore5: '0.00000',
      threshold: '20.00000',
      passing: false,
      breakdown: [],
    });
  });

  it('adds decimals exactly: 0.1 + 0.2 is 0.3', () => {
    const scorer: ScorerSettings = { type: 'weighted', threshold: '20', weights: { A: '0.1', B: '0.2' } };
    const result = score([stamp('A'), stamp('B')], { scorer });
    expect(result.rawScore).toBe('0.3');
    expect(result.score).toBe('0.30000');
  });

  it('keeps digits beyond the fifth in rawScore and rounds the score half-up', () => {
    const scorer: ScorerSettings = { type: 'weighted', threshold: '20', weights: { A: '1.000004', B: '0.000001' } };
    const result = score([stamp('A'), stamp('B')], { scorer });
    expect(result.rawScore).toBe('1.000005');
    expect(result.score).toBe('1.00001');
  });

  it('uses the scorer override, then the catalogue default, then 0', () => {
    const scorer: ScorerSettings = { type: 'weighted', threshold: '20', weights: { Google: '10.5', Discord: '0' } };
    const result = score([stamp('Google'), stamp('Discord'), stamp('Linkedin'), stamp('SomeNewProvider'), stamp('toString')], {
      scorer,
    });
    // 10.5 + 0 + 1.531 + 0 + 0
    expect(result.rawScore).toBe('12.031');
    expect(Object.fromEntries(result.counted.map((c) => [c.provider, c.weight]))).toEqual({
      Google: '10.5',
      Discord: '0',
      Linkedin: '1.531',
      SomeNewProvider: '0',
      toString: '0',
    });
  });

  it('counts a provider the catalogue gives no weight to as 0', () => {
    expect(defaultWeights.get('Steam')).toBe('0');
    expect(score([stamp('Steam'), stamp('Google')]).rawScore).toBe('0.525');
  });

  it('refuses a malformed override or an unknown scorer type', () => {
    const bad = (scorer: ScorerSettings) => () => score([stamp('Google')], { scorer });
    expect(bad({ type: 'weighted', threshold: '20', weights: { Google: 'abc' } })).toThrow(ScoringInputError);
    expect(bad({ type: 'weighted', threshold: '20', weights: { Google: 'abc' } })).toThrow(
      'scorer weight of provider "Google": "abc" is not a decimal number',
    );
    // Even an override of a provider the address does not have.
    expect(bad({ type: 'weighted', threshold: '20', weights: { Discord: '1e2' } })).toThrow(ScoringInputError);
    expect(bad({ type: 'weighted', threshold: '20', weights: { Discord: 2 as unknown as string } })).toThrow(
      'scorer weight of provider "Discord": expected decimal text, got number',
    );
    expect(bad({ type: 'ranked' as 'weighted', threshold: '20', weights: {} })).toThrow('unknown scorer type "ranked"');
  });
});

describe('binary scorer', () => {
  // Government ID 16.026 + Biometrics 6.001 = 22.027
  const strongStamps = () => [stamp('HolonymGovIdProvider'), stamp('Biometrics')];

  it('passes above the threshold', () => {
    const result = score(strongStamps(), { scorer: binary });
    expect(result.rawScore).toBe('22.027');
    expect(result.score).toBe('1.00000');
    expect(result.evidence).toEqual({ type: 'ThresholdScoreCheck', success: true, rawScore: '22.02700', threshold: '20.00000' });
  });

  it('fails below the threshold', () => {
    const result = score([stamp('Google'), stamp('X')], { scorer: binary });
    expect(result.score).toBe('0.00000');
    expect(result.evidence).toEqual({ type: 'ThresholdScoreCheck', success: false, rawScore: '3.72500', threshold: '20.00000' });
  });

  it('passes exactly at the threshold', () => {
    const scorer: ScorerSettings = { type: 'binary', threshold: '22.027', weights: {} };
    const result = score(strongStamps(), { scorer });
    expect(result.score).toBe('1.00000');
    expect(result.evidence).toEqual({ type: 'ThresholdScoreCheck', success: true, rawScore: '22.02700', threshold: '22.02700' });
  });

  it('fails just below the threshold', () => {
    const scorer: ScorerSettings = { type: 'binary', threshold: '22.02701', weights: {} };
    const result = score(strongStamps(), { scorer });
    expect(result.score).toBe('0.00000');
    expect(result.evidence).toEqual({ type: 'ThresholdScoreCheck', success: false, rawScore: '22.02700', threshold: '22.02701' });
  });

  it('compares exactly where floating point would fail (0.7 + 0.1 ≥ 0.8)', () => {
    expect(0.7 + 0.1 >= 0.8).toBe(false);
    const scorer: ScorerSettings = { type: 'binary', threshold: '0.8', weights: { A: '0.7', B: '0.1' } };
    const result = score([stamp('A'), stamp('B')], { scorer });
    expect(result.evidence).toEqual({ type: 'ThresholdScoreCheck', success: true, rawScore: '0.80000', threshold: '0.80000' });
    expect(result.score).toBe('1.00000');
  });

  it('decides on the exact sum, not its five-digit display', () => {
    const scorer: ScorerSettings = { type: 'binary', threshold: '20', weights: { A: '19.999996' } };
    const result = score([stamp('A')], { scorer });
    expect(result.rawScore).toBe('19.999996');
    expect(result.evidence).toEqual({ type: 'ThresholdScoreCheck', success: false, rawScore: '20.00000', threshold: '20.00000' });
    expect(result.score).toBe('0.00000');
  });

  it('applies overrides before the threshold check', () => {
    const scorer: ScorerSettings = { type: 'binary', threshold: '20', weights: { Google: '20' } };
    expect(score([stamp('Google')], { scorer }).evidence).toEqual({
      type: 'ThresholdScoreCheck',
      success: true,
      rawScore: '20.00000',
      threshold: '20.00000',
    });
  });

  it('refuses a malformed threshold', () => {
    const scorer: ScorerSettings = { type: 'binary', threshold: 'twenty', weights: {} };
    expect(() => score([stamp('Google')], { scorer })).toThrow('scorer threshold: "twenty" is not a decimal number');
  });
});

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
