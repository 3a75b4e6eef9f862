import { type TSchema, Type } from '@sinclair/typebox';
import { Integer } from '../http/schemas.js';
import { MAX_OFFSET } from './values.js';

/** Response shapes of the public data API (documentation; bodies are sent pre-serialized from the cache). */

/** A query-string text parameter (its content is checked by the domain, which refuses NUL characters). */
export const QueryText = (maxLength: number, description: string, extra: Record<string, unknown> = {}) =>
  Type.String({ maxLength, description, ...extra });

/** `offset` of the public lists; past MAX_OFFSET the domain answers 400 invalid_offset (with its own message, hence no `maximum` here). */
export const PublicOffsetSchema = Integer({
  minimum: 0,
  default: 0,
  description: `Items to skip, at most ${MAX_OFFSET} (deeper → 400 invalid_offset; page through filters such as pk__gt instead).`,
});

/** Helpers of the response shapes of every public data capability. */
export const DateTime = (description: string) =>
  Type.String({ description: `${description} (ISO 8601 with milliseconds and Z).`, examples: ['2026-03-01T12:00:00.000Z'] });
export const Address = (description: string) => Type.String({ description: `${description}: 0x and 40 lower-case hexadecimal digits.` });
export const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()]);
export const NullableOf = (schema: TSchema, description: string) => Type.Union([schema, Type.Null()], { description });
export const Dict = (description: string) => Type.Record(Type.String(), Type.Unknown(), { description });

export const ProfileSchema = Type.Object(
  {
    id: Type.Integer(),
    url: Type.Union([Type.String(), Type.Null()], { description: 'Profile page.' }),
    handle: Type.String({ description: 'Handle on the code-hosting platform.' }),
    keywords: Type.Array(Type.String()),
    position: Type.Integer({ description: 'Position on the weekly earners leaderboard.' }),
    avatar_url: Type.Union([Type.String(), Type.Null()]),
    github_url: Type.Union([Type.String(), Type.Null()]),
    total_earned: Type.Number({ description: 'Base currency collected.' }),
    organizations: Dict('Profiles this user works with.'),
  },
  { title: 'Profile' },
);
