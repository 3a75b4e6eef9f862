import { Type } from '@sinclair/typebox';
import { formatScore, ONE, sumDecimals, ZERO } from './decimal.js';
import { defineScorerType, parseSetting } from './scorer-type.js';

/** Score 1 when the weighted sum reaches the threshold, else 0; the evidence shows the check. */
export const binary = defineScorerType({
  name: 'binary',
  description: '1 when the weighted sum reaches the threshold, else 0',
  settings: Type.Object({}, { additionalProperties: false }),
  defaults: {},
  score(stamps, settings) {
    const threshold = parseSetting(settings.threshold, 'scorer threshold');
    const applied = stamps.map((stamp) => stamp.weight);
    const raw = sumDecimals(applied);
    // The check uses the exact sum; the five-digit evidence is only its display,
    // so a raw 19.999996 fails a threshold of 20 although both read "20.00000".
    const success = raw.gte(threshold);
    return {
      applied,
      score: success ? ONE : ZERO,
      evidence: { type: 'ThresholdScoreCheck', success, rawScore: formatScore(raw), threshold: formatScore(threshold) },
    };
  },
});
