/** The `v2-score` case: the v2 score of a primed 20-stamp address. */
import type { LoadCase } from './load.js';

/**
 * The addresses were scored when primed: each request scores again from the stored, verified
 * stamps, finds nothing changed and writes nothing.
 */
export function v2ScoreLoad(apiKey: string, scorerId: number, pick: (n: number) => string, expectedRawScore: string): Omit<LoadCase, 'url' | 'connections' | 'warmupSeconds' | 'seconds' | 'around'> {
  return {
    method: 'GET',
    headers: { 'x-api-key': apiKey },
    path: (n) => `/v2/stamps/${scorerId}/score/${pick(n)}`,
    checkDuringLoad: true,
    checkBody: (body) => {
      const score = JSON.parse(body) as { score?: unknown; error?: unknown; stamps?: Record<string, unknown> };
      if (score.error !== null) return `error ${String(score.error)}`;
      if (score.score !== expectedRawScore) return `score ${String(score.score)}`;
      return Object.keys(score.stamps ?? {}).length === 20 ? null : 'not 20 stamps';
    },
  };
}
