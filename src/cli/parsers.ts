import { InvalidArgumentError } from 'commander';
import { type Permission, parsePermissions, UnknownPermissionError } from '../scoring/accounts/permissions.js';

export function positiveInteger(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1 || !Number.isSafeInteger(Number(value))) {
    throw new InvalidArgumentError(`"${value}" is not a positive whole number.`);
  }
  return Number(value);
}

export function tier(value: string): number {
  if (!/^[1-4]$/.test(value)) throw new InvalidArgumentError(`"${value}" is not a tier; use 1, 2, 3 or 4.`);
  return Number(value);
}

/** Collects repeated `--weight Provider=1.5` options into an object. */
export function weightEntry(value: string, previous: Record<string, string> = {}): Record<string, string> {
  const at = value.lastIndexOf('=');
  if (at <= 0 || at === value.length - 1) {
    throw new InvalidArgumentError(`"${value}" is not PROVIDER=WEIGHT (for example Google=1.5).`);
  }
  return { ...previous, [value.slice(0, at)]: value.slice(at + 1) };
}

/** Collects repeated `--setting name=value` options (a scorer type's own settings) into an object. */
export function settingEntry(value: string, previous: Record<string, string> = {}): Record<string, string> {
  const at = value.indexOf('=');
  if (at <= 0) throw new InvalidArgumentError(`"${value}" is not NAME=VALUE (for example platform_cap=10).`);
  return { ...previous, [value.slice(0, at)]: value.slice(at + 1) };
}

export function addressArgument(value: string): string {
  if (!/^0x[0-9a-fA-F]{40}$/.test(value)) throw new InvalidArgumentError(`"${value}" is not 0x followed by 40 hexadecimal digits.`);
  return value.toLowerCase();
}

/** A comma-separated permission list (`read_scores,historical_endpoint`); repeated options add up. */
export function permissionList(value: string, previous: Permission[] = []): Permission[] {
  try {
    return [...previous, ...parsePermissions(value)];
  } catch (error) {
    if (error instanceof UnknownPermissionError) throw new InvalidArgumentError(error.message);
    throw error;
  }
}
