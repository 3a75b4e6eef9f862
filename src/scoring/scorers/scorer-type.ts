/**
 * What a scorer type is: its own settings (a TypeBox schema and their defaults) and how it turns
 * the weights of the stamps that count into a score. Everything before that (which stamps count,
 * deduplication, the weight of each provider) is the engine's and the same for every type.
 */
import { type Static, type TObject, Type } from '@sinclair/typebox';
import { type Decimal, parseDecimal } from './decimal.js';

/** One counted stamp as a scorer type sees it. */
export interface WeightedStamp {
  provider: string;
  /** The catalogue platform of the provider; the provider itself when the catalogue does not know it. */
  platform: string;
  /** The scorer's weight for the provider (override or catalogue default). */
  weight: Decimal;
}

/** The `evidence` of threshold-type scorers. */
export const ThresholdScoreCheckSchema = Type.Object(
  {
    type: Type.Literal('ThresholdScoreCheck'),
    success: Type.Boolean(),
    rawScore: Type.String({ description: 'Weighted sum before the threshold check, 5 fraction digits.' }),
    threshold: Type.String({ description: 'The scorer threshold, 5 fraction digits.' }),
  },
  { title: 'ThresholdScoreCheck' },
);

export type ThresholdScoreCheck = Static<typeof ThresholdScoreCheckSchema>;

export interface TypeScore {
  /** The weight each stamp contributes, in the order given: the record's `stamp_scores`. */
  applied: Decimal[];
  /** The score before formatting (the sum of `applied`, or a pass/fail value). */
  score: Decimal;
  evidence: ThresholdScoreCheck | null;
}

/** Settings every scorer has, whatever its type (columns of the scorers table). */
export interface CommonSettings {
  /** Decimal text. */
  threshold: string;
}

export interface ScorerTypeDefinition<S extends TObject = TObject> {
  name: string;
  /** One sentence for `--help` and the docs. */
  description: string;
  /** The type's own settings, stored as the scorer's JSON `settings`. */
  settings: S;
  defaults: Static<S>;
  score(stamps: readonly WeightedStamp[], settings: Static<S> & CommonSettings): TypeScore;
}

/** Keeps the settings type of a definition while checking it against the interface. */
export function defineScorerType<S extends TObject>(definition: ScorerTypeDefinition<S>): ScorerTypeDefinition<S> {
  return definition;
}

/** The scorer's settings cannot be used (a malformed weight or threshold). */
export class ScoringInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ScoringInputError';
  }
}

export function parseSetting(text: unknown, what: string): Decimal {
  if (typeof text !== 'string') throw new ScoringInputError(`${what}: expected decimal text, got ${typeof text}`);
  try {
    return parseDecimal(text);
  } catch (error) {
    throw new ScoringInputError(`${what}: ${(error as Error).message}`);
  }
}
