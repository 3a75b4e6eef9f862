/**
 * What a model service may answer (docs/models.md), read strictly: a JSON object, either
 * - Stampgate's shape `{"score": <number 0..100>, …other fields}`, or
 * - the reference's shape `{"data": {"human_probability": <number 0..100>, "n_transactions"?, …}, "metadata"?}`,
 *   whose `human_probability` becomes `score` and `n_transactions` becomes `num_transactions`.
 * Every other field of the object (of `data`, in the reference's shape) is passed through as it came.
 * Anything else (an array, a string, a score that is text, outside 0..100 or not finite) is not an answer.
 */

export type ModelFields = { score: number } & Record<string, unknown>;

export type ReadAnswer = { ok: true; fields: ModelFields } | { ok: false; reason: string };

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isScore(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 && value <= 100;
}

export function readModelAnswer(body: unknown): ReadAnswer {
  if (!isObject(body)) return { ok: false, reason: 'answer is not a JSON object' };
  if ('score' in body) {
    if (!isScore(body.score)) return { ok: false, reason: 'score is not a number from 0 to 100' };
    const { score, ...rest } = body;
    return { ok: true, fields: { score, ...rest } };
  }
  const data = body.data;
  if (isObject(data) && 'human_probability' in data) {
    if (!isScore(data.human_probability)) return { ok: false, reason: 'human_probability is not a number from 0 to 100' };
    const { human_probability: score, n_transactions, ...rest } = data;
    return { ok: true, fields: { score, ...(n_transactions !== undefined ? { num_transactions: n_transactions } : {}), ...rest } };
  }
  return { ok: false, reason: 'answer has no score' };
}
