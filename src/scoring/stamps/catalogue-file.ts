/** The catalogue file format and its validation, with the line and column of a JSON syntax error. */
import { isDecimalText } from '../scorers/decimal.js';

// ---------------------------------------------------------------------------
// File format

export interface CatalogueFileStamp {
  name: string;
  description: string;
  weight: string;
  deprecated?: boolean;
}

export interface CatalogueFileGroup {
  name: string;
  stamps: CatalogueFileStamp[];
}

export interface CatalogueFilePlatform {
  id: string;
  name: string;
  icon: string;
  description: string;
  connectMessage: string;
  website?: string;
  groups: CatalogueFileGroup[];
}

export interface CatalogueFile {
  threshold: string;
  platforms: CatalogueFilePlatform[];
}

// ---------------------------------------------------------------------------
// In-memory catalogue

/** One stamp as listed by `GET /registry/stamp-metadata`. */

// ---------------------------------------------------------------------------
// Validation

export type Fail = (location: string, problem: string) => never;

export function validateCatalogueFile(value: unknown, fail: Fail): CatalogueFile {
  const top = expectObject(value, 'top level', ['threshold', 'platforms'], fail);
  const threshold = requireDecimal(top, 'threshold', '', fail);
  const platformValues = requireArray(top, 'platforms', '', fail);

  const platformIds = new Map<string, string>();
  const providerLocations = new Map<string, string>();
  const platforms = platformValues.map((platformValue, p): CatalogueFilePlatform => {
    const at = `platforms[${p}]`;
    const raw = expectObject(
      platformValue,
      at,
      ['id', 'name', 'icon', 'description', 'connectMessage', 'website', 'groups'],
      fail,
    );
    const id = requireText(raw, 'id', at, fail);
    const earlierPlatform = platformIds.get(id);
    if (earlierPlatform !== undefined) {
      fail(`${at}.id`, `platform id ${JSON.stringify(id)} is already used by ${earlierPlatform}`);
    }
    platformIds.set(id, at);

    const platform: CatalogueFilePlatform = {
      id,
      name: requireText(raw, 'name', at, fail),
      icon: requireText(raw, 'icon', at, fail),
      description: requireText(raw, 'description', at, fail),
      connectMessage: requireText(raw, 'connectMessage', at, fail),
      groups: [],
    };
    const website = optionalText(raw, 'website', at, fail);
    if (website !== undefined) platform.website = website;

    const groupNames = new Map<string, string>();
    platform.groups = requireArray(raw, 'groups', at, fail).map((groupValue, g): CatalogueFileGroup => {
      const groupAt = `${at}.groups[${g}]`;
      const rawGroup = expectObject(groupValue, groupAt, ['name', 'stamps'], fail);
      const name = requireText(rawGroup, 'name', groupAt, fail);
      const earlierGroup = groupNames.get(name);
      if (earlierGroup !== undefined) {
        fail(`${groupAt}.name`, `group name ${JSON.stringify(name)} is already used by ${earlierGroup}`);
      }
      groupNames.set(name, groupAt);

      const stamps = requireArray(rawGroup, 'stamps', groupAt, fail).map((stampValue, s): CatalogueFileStamp => {
        const stampAt = `${groupAt}.stamps[${s}]`;
        const rawStamp = expectObject(stampValue, stampAt, ['name', 'description', 'weight', 'deprecated'], fail);
        const provider = requireText(rawStamp, 'name', stampAt, fail);
        const earlierProvider = providerLocations.get(provider);
        if (earlierProvider !== undefined) {
          fail(`${stampAt}.name`, `provider ${JSON.stringify(provider)} is already defined at ${earlierProvider}`);
        }
        providerLocations.set(provider, stampAt);
        const stamp: CatalogueFileStamp = {
          name: provider,
          description: requireText(rawStamp, 'description', stampAt, fail),
          weight: requireDecimal(rawStamp, 'weight', stampAt, fail),
        };
        const deprecated = optionalBoolean(rawStamp, 'deprecated', stampAt, fail);
        if (deprecated !== undefined) stamp.deprecated = deprecated;
        return stamp;
      });
      return { name, stamps };
    });

    return platform;
  });

  return { threshold, platforms };
}

function expectObject(value: unknown, location: string, allowedKeys: readonly string[], fail: Fail): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    fail(location, `expected an object, got ${describe(value)}`);
  }
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (!allowedKeys.includes(key)) {
      fail(location, `unknown field ${JSON.stringify(key)} (allowed: ${allowedKeys.join(', ')})`);
    }
  }
  return record;
}

function fieldLocation(parent: string, key: string): string {
  return parent === '' ? key : `${parent}.${key}`;
}

function requirePresent(record: Record<string, unknown>, key: string, parent: string, fail: Fail): unknown {
  if (!Object.hasOwn(record, key)) fail(parent === '' ? 'top level' : parent, `missing field ${JSON.stringify(key)}`);
  return record[key];
}

function requireText(record: Record<string, unknown>, key: string, parent: string, fail: Fail): string {
  const value = requirePresent(record, key, parent, fail);
  if (typeof value !== 'string' || value.trim() === '') {
    fail(fieldLocation(parent, key), `expected a non-empty string, got ${describe(value)}`);
  }
  return value as string;
}

function optionalText(record: Record<string, unknown>, key: string, parent: string, fail: Fail): string | undefined {
  return Object.hasOwn(record, key) ? requireText(record, key, parent, fail) : undefined;
}

function optionalBoolean(record: Record<string, unknown>, key: string, parent: string, fail: Fail): boolean | undefined {
  if (!Object.hasOwn(record, key)) return undefined;
  const value = record[key];
  if (typeof value !== 'boolean') fail(fieldLocation(parent, key), `expected true or false, got ${describe(value)}`);
  return value as boolean;
}

function requireArray(record: Record<string, unknown>, key: string, parent: string, fail: Fail): unknown[] {
  const value = requirePresent(record, key, parent, fail);
  if (!Array.isArray(value)) fail(fieldLocation(parent, key), `expected an array, got ${describe(value)}`);
  return value as unknown[];
}

function requireDecimal(record: Record<string, unknown>, key: string, parent: string, fail: Fail): string {
  const value = requirePresent(record, key, parent, fail);
  const location = fieldLocation(parent, key);
  if (typeof value !== 'string') {
    fail(location, `expected a decimal number written as a string (e.g. "1.5"), got ${describe(value)}`);
  }
  const text = value as string;
  if (!isDecimalText(text)) fail(location, `${JSON.stringify(text)} is not a decimal number`);
  if (text.startsWith('-')) fail(location, `${JSON.stringify(text)} is negative; it must be zero or more`);
  return text;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  switch (typeof value) {
    case 'string': {
      const quoted = JSON.stringify(value);
      return value.trim() === '' ? `the blank string ${quoted}` : `the string ${quoted.length > 60 ? `${quoted.slice(0, 57)}…"` : quoted}`;
    }
    case 'number':
    case 'boolean':
      return `${typeof value} ${String(value)}`;
    case 'object':
      return 'an object';
    default:
      return typeof value;
  }
}

// ---------------------------------------------------------------------------
// Locating JSON syntax errors

/**
 * Offset of a JSON syntax error. V8 reports "at position N" for most errors
 * but not all (an unexpected token only quotes a snippet), so when it says
 * nothing a small scanner finds the first character that cannot continue a
 * valid document.
 */
export function jsonErrorOffset(text: string, parserMessage: string): number {
  const reported = /at position (\d+)/.exec(parserMessage);
  if (reported?.[1] !== undefined) return Number(reported[1]);
  return firstJsonSyntaxErrorOffset(text);
}

export function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, Math.max(0, Math.min(offset, text.length)));
  const lines = before.split('\n');
  return { line: lines.length, column: (lines.at(-1)?.length ?? 0) + 1 };
}

class JsonSyntaxStop {
  constructor(readonly offset: number) {}
}

function firstJsonSyntaxErrorOffset(text: string): number {
  let i = 0;
  const stop = (offset = i): never => {
    throw new JsonSyntaxStop(offset);
  };
  const skipWhitespace = (): void => {
    while (i < text.length && ' \t\n\r'.includes(text[i] as string)) i++;
  };
  const expect = (char: string): void => {
    if (text[i] !== char) stop();
    i++;
  };
  const scanString = (): void => {
    expect('"');
    for (;;) {
      const char = text[i];
      if (char === undefined || char < ' ') stop();
      if (char === '"') {
        i++;
        return;
      }
      if (char === '\\') {
        i++;
        const escape = text[i];
        if (escape === 'u') {
          for (let k = 1; k <= 4; k++) if (!/^[0-9a-fA-F]$/.test(text[i + k] ?? '')) stop(i + k);
          i += 5;
        } else if (escape !== undefined && '"\\/bfnrt'.includes(escape)) {
          i++;
        } else {
          stop();
        }
      } else {
        i++;
      }
    }
  };
  const numberPattern = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
  const scanValue = (): void => {
    skipWhitespace();
    const char = text[i];
    if (char === '{') {
      i++;
      skipWhitespace();
      if (text[i] === '}') {
        i++;
        return;
      }
      for (;;) {
        skipWhitespace();
        scanString();
        skipWhitespace();
        expect(':');
        scanValue();
        skipWhitespace();
        if (text[i] === ',') i++;
        else return expect('}');
      }
    }
    if (char === '[') {
      i++;
      skipWhitespace();
      if (text[i] === ']') {
        i++;
        return;
      }
      for (;;) {
        scanValue();
        skipWhitespace();
        if (text[i] === ',') i++;
        else return expect(']');
      }
    }
    if (char === '"') return scanString();
    for (const word of ['true', 'false', 'null']) {
      if (char === word[0]) {
        for (const letter of word) expect(letter);
        return;
      }
    }
    numberPattern.lastIndex = i;
    const number = numberPattern.exec(text);
    if (number === null) stop();
    else i += number[0].length;
  };
  try {
    scanValue();
    skipWhitespace();
    if (i < text.length) stop();
  } catch (error) {
    if (error instanceof JsonSyntaxStop) return error.offset;
    throw error;
  }
  return text.length;
}
