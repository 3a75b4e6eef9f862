/** Calls of the server's HTTP API with the session cookie and the session's CSRF token. */

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    detail: string,
  ) {
    super(detail);
  }
}

let csrfToken: string | null = null;
let onUnauthorized: (() => void) | null = null;

/** What to do when the server no longer knows the session (it expired or was signed out elsewhere). */
export function setUnauthorizedHandler(handler: () => void): void {
  onUnauthorized = handler;
}

export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

export async function api<T>(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  // Every call carries the token: some GETs change state (a score read records the score).
  if (csrfToken !== null) headers['x-csrf-token'] = csrfToken;
  const response = await fetch(path, {
    method,
    headers,
    credentials: 'same-origin',
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  if (response.status === 204) return undefined as T;
  const data = (await response.json().catch(() => null)) as { code?: string; detail?: string } | null;
  if (response.status === 401) onUnauthorized?.();
  if (!response.ok) throw new ApiError(response.status, data?.code ?? 'error', data?.detail ?? `The server answered ${response.status}.`);
  return data as T;
}

export const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error));

export interface Session {
  address: string;
  account_id: string;
  csrf_token: string;
  expires_at: string;
}

export interface Scorer {
  id: string;
  name: string;
  type: string;
  threshold: string;
  weights: Record<string, string>;
  settings: Record<string, unknown>;
  requires_signature: boolean;
}

export interface ApiKey {
  prefix: string;
  name: string;
  tier: number;
  permissions: string[];
  revoked_at: string | null;
  created_at: string;
}

export interface Usage {
  days: string[];
  keys: { prefix: string; name: string; revoked: boolean; requests: number[]; rate_limited: number[] }[];
}

export const permissionNames = ['submit_passports', 'read_scores', 'create_scorers', 'historical_endpoint'] as const;
