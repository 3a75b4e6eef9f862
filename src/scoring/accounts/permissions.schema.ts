import { Type } from '@sinclair/typebox';
import { permissionNames } from './permissions.js';

/** One permission name, for request and response schemas (HTTP key management). */
export const PermissionSchema = Type.Union(
  permissionNames.map((name) => Type.Literal(name)),
  { description: `An API key permission: ${permissionNames.join(', ')}.` },
);

/** A key's permission set as sent or shown over HTTP: each name at most once. */
export const PermissionListSchema = Type.Array(PermissionSchema, { maxItems: permissionNames.length, uniqueItems: true });
