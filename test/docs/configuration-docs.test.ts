/**
 * docs/configuration.md against the configuration code: every environment variable the code reads
 * has a row with its default, and every row names a variable the code reads.
 *
 * The names are read from the sources of src/config/ (each setting declares `name: 'NAME'`, and a
 * parser may read a neighbour as `env.NAME`), not only from the loaded settings, so that a
 * variable read outside the settings table is caught too.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { describeSettings } from '../../src/config/index.js';

const configDir = new URL('../../src/config/', import.meta.url);
const docsFile = new URL('../../docs/configuration.md', import.meta.url);

/** Every variable name the configuration sources declare or read. */
function namesReadByCode(): Set<string> {
  const names = new Set<string>();
  for (const file of readdirSync(configDir).filter((f) => f.endsWith('.ts'))) {
    const source = readFileSync(new URL(file, configDir), 'utf8');
    for (const match of source.matchAll(/\bname: '([A-Z][A-Z0-9_]*)'/g)) names.add(match[1]!);
    for (const match of source.matchAll(/\benv(?:\?\.|\.)([A-Z][A-Z0-9_]*)\b/g)) names.add(match[1]!);
    for (const match of source.matchAll(/\benv\[['"]([A-Z][A-Z0-9_]*)['"]\]/g)) names.add(match[1]!);
  }
  return names;
}

/** The rows of the page's tables: `| \`NAME\` | \`default\` | type | meaning |`. */
function documentedRows(): Map<string, { defaultText: string; type: string; meaning: string }> {
  const page = readFileSync(docsFile, 'utf8');
  const rows = new Map<string, { defaultText: string; type: string; meaning: string }>();
  for (const match of page.matchAll(/^\| `([A-Z][A-Z0-9_]*)` \| ([^|]*) \| ([^|]*) \| (.*) \|$/gm)) {
    expect(rows.has(match[1]!), `${match[1]} has two rows`).toBe(false);
    rows.set(match[1]!, { defaultText: match[2]!.trim(), type: match[3]!.trim(), meaning: match[4]!.trim() });
  }
  return rows;
}

describe('docs/configuration.md', () => {
  const code = namesReadByCode();
  const rows = documentedRows();

  it('finds the settings in the sources (the parsing of the sources still works)', () => {
    // The loaded settings are a subset of what the sources name; if the pattern broke, this fails.
    for (const setting of describeSettings()) expect(code, setting.name).toContain(setting.name);
    expect(code.size).toBeGreaterThanOrEqual(describeSettings().length);
  });

  it('documents every variable the configuration code reads', () => {
    const missing = [...code].filter((name) => !rows.has(name)).sort();
    expect(missing).toEqual([]);
  });

  it('documents only variables the configuration code reads', () => {
    const unknown = [...rows.keys()].filter((name) => !code.has(name)).sort();
    expect(unknown).toEqual([]);
  });

  it('gives each variable the default the code applies, a type and a meaning', () => {
    for (const setting of describeSettings()) {
      const row = rows.get(setting.name);
      expect(row?.defaultText, setting.name).toBe(`\`${setting.defaultText}\``);
      expect(row?.type, setting.name).not.toBe('');
      expect(row?.meaning, setting.name).not.toBe('');
    }
  });
});
