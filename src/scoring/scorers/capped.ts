import { Type } from '@sinclair/typebox';
import { type Decimal, sumDecimals } from './decimal.js';
import { defineScorerType, parseSetting } from './scorer-type.js';

/**
 * The weighted sum with each platform's contribution capped at `platform_cap`, so that one platform
 * with many stamps cannot carry a passport. Within a platform the stamps count in provider order
 * until the cap is spent; the record's `stamp_scores` show what each stamp actually added, so they
 * still add up to the score.
 */
export const capped = defineScorerType({
  name: 'capped',
  description: 'the weighted sum with each platform contributing at most platform_cap',
  settings: Type.Object(
    {
      platform_cap: Type.String({
        pattern: '^\\d+(\\.\\d+)?$',
        maxLength: 40,
        description: 'Most a single catalogue platform adds to the score, decimal text.',
      }),
    },
    { additionalProperties: false },
  ),
  // Half the shipped threshold (20): no platform alone gets a passport more than halfway.
  defaults: { platform_cap: '10' },
  score(stamps, settings) {
    const cap = parseSetting(settings.platform_cap, 'scorer platform_cap');
    const spent = new Map<string, Decimal>();
    const applied = stamps.map((stamp) => {
      const used = spent.get(stamp.platform);
      const room = used === undefined ? cap : cap.minus(used);
      const added = stamp.weight.gt(room) ? room : stamp.weight;
      spent.set(stamp.platform, used === undefined ? added : used.plus(added));
      return added;
    });
    return { applied, score: sumDecimals(applied), evidence: null };
  },
});
