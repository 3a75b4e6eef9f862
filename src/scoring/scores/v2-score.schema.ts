import { type Static, Type } from '@sinclair/typebox';

const iso = 'ISO 8601 with +00:00';

export const V2StampScoreSchema = Type.Object(
  {
    score: Type.String({ description: 'Weight the stamp added, 5 fraction digits; "0.00000" when deduplicated.', examples: ['0.52500'] }),
    dedup: Type.Boolean({ description: 'Another address holds this stamp\'s nullifier within the scorer, so it counted for nothing.' }),
    expiration_date: Type.String({ description: `The stamp's expirationDate, ${iso}.`, examples: ['2026-12-01T00:00:00.000+00:00'] }),
  },
  { title: 'V2StampScore' },
);

export const V2ScoreSchema = Type.Object(
  {
    address: Type.String({ examples: ['0x5cdef6d4b2f8e6e1f3b0b0a5e3d2c1b0a9f8e7d6'] }),
    score: Type.String({ description: 'The raw weighted sum of the counted stamps, 5 fraction digits, for every scorer type.', examples: ['21.75400'] }),
    passing_score: Type.Boolean({ description: 'score ≥ threshold (compared exactly).', examples: [true] }),
    threshold: Type.String({ description: 'The scorer\'s threshold, 5 fraction digits.', examples: ['20.00000'] }),
    last_score_timestamp: Type.String({ description: `When the address was last scored, ${iso}.`, examples: ['2026-11-25T13:05:00.000+00:00'] }),
    expiration_timestamp: Type.Union([Type.String(), Type.Null()], {
      description: `The earliest expiry among the stamps that counted, ${iso}; null when none counted.`,
      examples: ['2026-12-01T00:00:00.000+00:00'],
    }),
    error: Type.Union([Type.String(), Type.Null()], { description: 'Why scoring failed (score "0.00000", passing_score false); null otherwise.' }),
    stamps: Type.Record(Type.String(), V2StampScoreSchema, {
      description: 'Every valid, live stamp of the address, one per provider; deduplicated ones with score "0.00000" and dedup true.',
      examples: [
        {
          Google: { score: '0.52500', dedup: false, expiration_date: '2026-12-01T00:00:00.000+00:00' },
          Ens: { score: '0.00000', dedup: true, expiration_date: '2026-12-03T00:00:00.000+00:00' },
        },
      ],
    }),
    points_data: Type.Null({ description: 'Always null (the reference service\'s points programme).' }),
    possible_points_data: Type.Null({ description: 'Always null.' }),
  },
  { title: 'V2Score' },
);

export type V2Score = Static<typeof V2ScoreSchema>;
