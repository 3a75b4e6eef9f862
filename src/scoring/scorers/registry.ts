/**
 * Every scorer type, by the name stored in `scorers.type`. Adding a type is one file exporting
 * its definition and one line here.
 */
import { binary } from './binary.js';
import { capped } from './capped.js';
import type { ScorerTypeDefinition } from './scorer-type.js';
import { weighted } from './weighted.js';

export const scorerTypes = {
  weighted,
  binary,
  capped,
} as const satisfies Record<string, ScorerTypeDefinition>;

export type ScorerType = keyof typeof scorerTypes;

export const scorerTypeNames = Object.keys(scorerTypes) as ScorerType[];

export function isScorerType(name: string): name is ScorerType {
  return Object.hasOwn(scorerTypes, name);
}

export function scorerTypeOf(name: ScorerType): ScorerTypeDefinition {
  return scorerTypes[name];
}
