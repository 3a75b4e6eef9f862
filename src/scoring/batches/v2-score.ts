import { Type } from '@sinclair/typebox';
import { V2ScoreSchema } from '../scores/v2-score.schema.js';

/** The synchronous batch's answer: one v2 score object per submitted address, in input order. */
export const V2ScoreListSchema = Type.Object({ items: Type.Array(V2ScoreSchema) }, { title: 'V2ScoreList' });
