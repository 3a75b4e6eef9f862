/**
 * The cases judged as a ratio to the ceiling (the single-score read's req/s, the cached list's CPU
 * per request) run in rounds, each round's window followed at once by a window of the ceiling,
 * whose server stays up for the whole run. This machine's speed moves by up to 2× within minutes
 * (the ceiling alone: 27 000-40 000 req/s in consecutive 4-second windows of one process), so a
 * ratio to a ceiling measured minutes earlier, before the import and the other cases, judged the
 * machine as much as the code. The record kept is the median round; every round's figures are
 * kept beside it.
 */
import { type CaseRecord, derive, type RoundFigures } from './report.js';

export type { RoundFigures } from './report.js';

/** Which way a paired case is judged: by its req/s over the ceiling's, or by its CPU per request over the ceiling's. */
export type PairedMeasure = 'ratioToCeiling' | 'cpuVsCeiling';

export function roundFigures(record: CaseRecord): RoundFigures {
  const d = derive(record, undefined);
  return { ratioToCeiling: d.ratioToCeiling, cpuVsCeiling: d.cpuVsCeiling, cpuPerRequestUs: d.cpuPerRequestUs, ceilingRps: d.ceilingRps };
}

/**
 * The median round by `measure`, with every round's figures attached. With an even count, the
 * worse of the two middle rounds: a verdict should not pass on the luckier half.
 */
export function medianRound(rounds: CaseRecord[], measure: PairedMeasure): CaseRecord {
  if (rounds.length === 0) throw new Error('medianRound: no rounds');
  const value = (r: CaseRecord) => roundFigures(r)[measure];
  // Best first: a higher req/s ratio is better, a lower CPU ratio is better.
  const sign = measure === 'ratioToCeiling' ? -1 : 1;
  const ordered = [...rounds].sort((a, b) => sign * (value(a) - value(b)));
  const median = ordered[Math.floor(ordered.length / 2)] as CaseRecord;
  return { ...median, rounds: rounds.map(roundFigures) };
}

/** "median of 3 rounds (59.0%, 65.2%, 71.3%)", in the order they ran; empty for a single round. */
export function roundsText(record: CaseRecord, format: (figures: RoundFigures) => string): string {
  if (record.rounds.length < 2) return '';
  return `median of ${record.rounds.length} rounds (${record.rounds.map(format).join(', ')})`;
}
