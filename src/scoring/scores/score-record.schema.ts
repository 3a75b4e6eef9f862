import { type Static, Type } from '@sinclair/typebox';
import { ThresholdScoreCheckSchema as ThresholdScoreCheck } from '../scorers/scorer-type.js';

const StampScores = Type.Record(Type.String(), Type.String({ description: 'Weight applied, 5 fraction digits.' }), {
  title: 'StampScores',
});

const scoreRecordFields = {
  address: Type.String(),
  score: Type.Union([Type.String(), Type.Null()], { description: 'Decimal with 5 fraction digits; null unless DONE.' }),
  status: Type.Union([Type.Literal('PROCESSING'), Type.Literal('DONE'), Type.Literal('ERROR')]),
  last_score_timestamp: Type.String({ description: 'When the record last changed state, ISO 8601 with +00:00.' }),
  expiration_date: Type.Union([Type.String(), Type.Null()], {
    description:
      'The earliest expirationDate among the stamps that counted, ISO 8601 with +00:00; null when none counted or while PROCESSING.',
  }),
  evidence: Type.Union([ThresholdScoreCheck, Type.Null()], { description: 'Binary scorers only.' }),
  error: Type.Union([Type.String(), Type.Null()], { description: 'Why scoring failed, when status is ERROR.' }),
  stamp_scores: Type.Union([StampScores, Type.Null()], {
    description:
      'Provider id → weight (5 fraction digits) of each stamp that counted; {} when none counted (also on ERROR); null only while PROCESSING.',
  }),
};

/** The full score record: the interface's six fields plus `expiration_date` and `stamp_scores`. */
export const ScoreRecordSchema = Type.Object(scoreRecordFields, { title: 'ScoreRecord' });
export type ScoreRecord = Static<typeof ScoreRecordSchema>;

const countField = Type.Integer({ description: 'Total matching items, across pages.' });

export const ScoreListSchema = Type.Object({ items: Type.Array(ScoreRecordSchema), count: countField }, { title: 'ScoreList' });
export type ScoreList = Static<typeof ScoreListSchema>;

export const SingleScoreSchema = Type.Object(
  { ...scoreRecordFields, items: Type.Array(ScoreRecordSchema, { minItems: 1, maxItems: 1 }), count: countField },
  {
    title: 'SingleScore',
    description:
      'A score list of exactly one item whose record fields are also repeated at the top level, so that clients reading ' +
      '`items[0]` and clients reading `score`/`status` directly (as written for the reference service) both work.',
  },
);
