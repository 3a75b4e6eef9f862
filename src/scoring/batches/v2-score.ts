import { Type } from '@sinclair/typebox';

/**
 * The v2 score object as batch responses carry it. TODO(v2core merge): replace with the v2 score
 * schema of src/scoring/scores (one definition for the single read and the batches).
 */
export const V2ScoreSchema = Type.Object({}, { additionalProperties: true, title: 'V2Score' });

export const V2ScoreListSchema = Type.Object({ items: Type.Array(V2ScoreSchema) });
