import { Type } from '@sinclair/typebox';

const ThresholdScoreCheck = Type.Object(
  {
    type: Type.Literal('ThresholdScoreCheck'),
    success: Type.Boolean(),
    rawScore: Type.String({ description: 'Weighted sum before the threshold check, 5 fraction digits.' }),
    threshold: Type.String({ description: 'The scorer threshold, 5 fraction digits.' }),
  },
  { title: 'ThresholdScoreCheck' },
);

export const ScoreRecordSchema = Type.Object(
  {
    address: Type.String(),
    score: Type.Union([Type.String(), Type.Null()], { description: 'Decimal with 5 fraction digits; null unless DONE.' }),
    status: Type.Union([Type.Literal('PROCESSING'), Type.Literal('DONE'), Type.Literal('ERROR')]),
    last_score_timestamp: Type.String({ description: 'When the record last changed state, ISO 8601 with +00:00.' }),
    evidence: Type.Union([ThresholdScoreCheck, Type.Null()], { description: 'Binary scorers only.' }),
    error: Type.Union([Type.String(), Type.Null()], { description: 'Why scoring failed, when status is ERROR.' }),
  },
  { title: 'ScoreRecord' },
);

export const ScoreListSchema = Type.Object(
  { items: Type.Array(ScoreRecordSchema), count: Type.Integer({ description: 'Total matching items, across pages.' }) },
  { title: 'ScoreList' },
);
