import { Type } from '@sinclair/typebox';
import { sumDecimals } from './decimal.js';
import { defineScorerType } from './scorer-type.js';

/** Score = the sum of the weights of the stamps that count; no evidence. */
export const weighted = defineScorerType({
  name: 'weighted',
  description: 'the sum of the weights of the stamps that count',
  settings: Type.Object({}, { additionalProperties: false }),
  defaults: {},
  score(stamps) {
    const applied = stamps.map((stamp) => stamp.weight);
    return { applied, score: sumDecimals(applied), evidence: null };
  },
});
