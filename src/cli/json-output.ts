/**
 * `--json` output in the HTTP API's spelling: snake_case keys. The services hand the CLI their
 * camelCase objects; the keys are renamed here, once, for every command.
 */

/**
 * Values kept exactly as they are: maps keyed by data (provider names of `weights`, the type's
 * own setting names) and foreign documents (a W3C credential, whose field names are its standard's).
 */
const verbatim = new Set(['weights', 'settings', 'stamp_scores', 'credential']);

/** `ownerAddress` → `owner_address`; a key that is not a camelCase identifier stays as it is. */
export function snakeCaseKey(key: string): string {
  if (!/^[a-z][a-zA-Z0-9]*$/.test(key)) return key;
  return key.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
}

/** `value` as JSON.stringify would see it, with every object key in snake_case (see `verbatim`). */
export function snakeCaseJson(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  const withToJson = value as { toJSON?: () => unknown };
  if (typeof withToJson.toJSON === 'function') return snakeCaseJson(withToJson.toJSON());
  if (Array.isArray(value)) return value.map(snakeCaseJson);
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) {
    const name = snakeCaseKey(key);
    out[name] = verbatim.has(name) ? field : snakeCaseJson(field);
  }
  return out;
}
