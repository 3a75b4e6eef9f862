import { parseTimestampFilter } from '../../scoring/timestamps.js';
import { isNonNegativeDecimal } from '../values.js';

/**
 * Reading one field of an import record (docs/public-data-import.md): the type
 * checks every section's reader shares, each problem reported as
 * `<section>[<index>].<field>: <problem>`.
 */

export interface Problem {
  /** Where, e.g. `bounties[3].value_in_token`. */
  at: string;
  problem: string;
}

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
export const HANDLE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/;
const MAX_TEXT = 10_000;

/** Reads one record's fields, collecting problems. */
export class Fields {
  constructor(
    private readonly path: string,
    private readonly record: Record<string, unknown>,
    readonly problems: Problem[],
  ) {}

  fail(field: string, problem: string): void {
    this.problems.push({ at: `${this.path}.${field}`, problem });
  }

  /** The field as given (null read as absent). */
  raw(field: string): unknown {
    return this.value(field);
  }

  private value(field: string): unknown {
    const value = this.record[field];
    return value === null ? undefined : value;
  }

  private missing(field: string, required: boolean): boolean {
    if (this.value(field) !== undefined) return false;
    if (required) this.fail(field, 'missing');
    return true;
  }

  text(field: string, options: { required?: boolean; max?: number; fallback?: string } = {}): string {
    if (this.missing(field, options.required ?? false)) return options.fallback ?? '';
    const value = this.value(field);
    const max = options.max ?? MAX_TEXT;
    if (typeof value !== 'string') this.fail(field, 'not a string');
    else if (value.includes('\u0000')) this.fail(field, 'contains a NUL character');
    else if (options.required && value.trim() === '') this.fail(field, 'empty');
    else if (value.length > max) this.fail(field, `longer than ${max} characters`);
    else return value;
    return '';
  }

  optionalText(field: string, max = MAX_TEXT): string | null {
    if (this.missing(field, false)) return null;
    const value = this.text(field, { max });
    return value === '' ? null : value;
  }

  url(field: string, required = false): string | null {
    if (this.missing(field, required)) return null;
    const value = this.value(field);
    if (typeof value === 'string' && value === '' && !required) return null;
    if (typeof value !== 'string' || value.length > 2000 || value.includes('\u0000') || !isHttpUrl(value)) {
      this.fail(field, 'not an http(s) URL');
      return null;
    }
    return value;
  }

  address(field: string, required = false): string | null {
    if (this.missing(field, required)) return null;
    const value = this.value(field);
    if (typeof value !== 'string' || !ADDRESS.test(value)) {
      this.fail(field, 'not an address (0x and 40 hexadecimal digits)');
      return null;
    }
    return value.toLowerCase();
  }

  /** A non-negative decimal; given as a string, or as a JSON whole number (exact). */
  decimal(field: string, required = false): string | null {
    if (this.missing(field, required)) return null;
    const value = this.value(field);
    const text = typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? String(value) : value;
    if (!isNonNegativeDecimal(text)) {
      this.fail(field, typeof value === 'number' ? 'not a decimal (write fractional amounts as strings, e.g. "0.25")' : 'not a decimal');
      return null;
    }
    return text;
  }

  integer(field: string, options: { required?: boolean; min?: number; fallback?: number } = {}): number {
    if (this.missing(field, options.required ?? false)) return options.fallback ?? 0;
    const value = this.value(field);
    const min = options.min ?? 0;
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
      this.fail(field, min === 1 ? 'not a positive whole number' : 'not a whole number ≥ 0');
      return options.fallback ?? 0;
    }
    return value;
  }

  boolean(field: string, fallback: boolean): boolean {
    if (this.missing(field, false)) return fallback;
    const value = this.value(field);
    if (typeof value !== 'boolean') {
      this.fail(field, 'not true or false');
      return fallback;
    }
    return value;
  }

  dateTime(field: string, required = false): number | null {
    if (this.missing(field, required)) return null;
    const value = this.value(field);
    const ms = typeof value === 'string' ? parseTimestampFilter(value) : null;
    if (ms === null) {
      this.fail(field, 'not an ISO 8601 date-time (e.g. 2026-03-01T12:00:00Z)');
      return null;
    }
    return ms;
  }

  /** A JSON object, stored as JSON text; `{}` when absent. */
  object(field: string): string {
    if (this.missing(field, false)) return '{}';
    const value = this.value(field);
    if (typeof value !== 'object' || Array.isArray(value)) {
      this.fail(field, 'not a JSON object');
      return '{}';
    }
    return JSON.stringify(value);
  }

  /** A JSON array, stored as JSON text; `[]` when absent. */
  array(field: string): string {
    if (this.missing(field, false)) return '[]';
    const value = this.value(field);
    if (!Array.isArray(value)) {
      this.fail(field, 'not a JSON array');
      return '[]';
    }
    return JSON.stringify(value);
  }

  strings(field: string, max = 200): string[] {
    if (this.missing(field, false)) return [];
    const value = this.value(field);
    if (!Array.isArray(value) || value.some((v) => typeof v !== 'string' || v.length > max || v.includes('\u0000'))) {
      this.fail(field, 'not an array of strings');
      return [];
    }
    return value as string[];
  }

  handle(field: string, value: unknown = this.value(field), at = field): string | null {
    if (value === undefined) return null;
    if (typeof value !== 'string' || !HANDLE.test(value)) {
      this.fail(at, 'not a handle (letters, digits, - _ . ; at most 100)');
      return null;
    }
    return value;
  }

  handles(field: string): string[] {
    if (this.missing(field, false)) return [];
    const value = this.value(field);
    if (!Array.isArray(value)) {
      this.fail(field, 'not an array of handles');
      return [];
    }
    return value.flatMap((v, i) => this.handle(field, v, `${field}[${i}]`) ?? []);
  }
}

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}
