import { describe, expect, it } from 'vitest';
import { readModelAnswer } from '../../src/models/model-answer.js';

describe('readModelAnswer', () => {
  it('takes the reference shape: human_probability becomes score, n_transactions num_transactions', () => {
    const read = readModelAnswer({ data: { human_probability: 75, n_transactions: 10, first_funder: 'f' }, metadata: { version: '1' } });
    expect(read).toEqual({ ok: true, fields: { score: 75, num_transactions: 10, first_funder: 'f' } });
  });

  it('takes the plain shape and passes other fields through', () => {
    expect(readModelAnswer({ score: 0, extra: [1] })).toEqual({ ok: true, fields: { score: 0, extra: [1] } });
  });

  it.each([[[]], ['75'], [{ score: '75' }], [{ score: 100.5 }], [{ score: -1 }], [{ data: { human_probability: 'x' } }], [{ data: {} }]])(
    'refuses %j',
    (body) => expect(readModelAnswer(body).ok).toBe(false),
  );
});
