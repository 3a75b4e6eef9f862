/** The scoring engine's two scorers: the weighted sum in exact decimals, and the binary threshold. */
import { describe, expect, it } from 'vitest';
import { ScoringInputError, type ScorerSettings } from '../../../src/scoring/scorers/engine.js';
import { daysFromNow, weighted, binary, stamp, score, defaultWeights } from '../../helpers/engine-input.js';

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
