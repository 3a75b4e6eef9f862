/**
 * The request shapes of the public Python client of the original bounty API
 * (`gitcoin` on PyPI), reproduced from its documented behaviour: it is not
 * installable here. What it does on the wire:
 *
 * - the endpoint URL is `…/api/v0.1/bounties/` (older releases: without the slash);
 * - `filter(name=value)` adds a parameter; names that take several values keep
 *   each one and send them joined by commas, the others keep the last value;
 *   Python's `str()` renders values (`True`, `42`);
 * - `order_by(x)` sets `order_by`; `get_page(n, per_page=25)` sets `limit` =
 *   per_page and `offset` = (n - 1) × per_page; `all()` drops both;
 * - `get(pk)` requests the endpoint URL with the pk appended (no trailing slash;
 *   older releases join with `/`), with whatever parameters were set;
 * - every request says `Accept-Encoding: gzip, deflate` (requests' default headers);
 * - parameters are form-encoded (`requests`: space → `+`, `,` → `%2C`); redirects
 *   are followed; `raise_for_status()` then `.json()`.
 */
const MULTI = new Set([
  'raw_data', 'experience_level', 'project_length', 'bounty_type', 'bounty_owner_address', 'idx_status', 'network',
  'bounty_owner_github_username', 'standard_bounties_id', 'github_url',
]);
const SINGLE = new Set(['pk__gt', 'started', 'is_open', 'fulfiller_github_username', 'interested_github_username', 'order_by', 'limit', 'offset']);

export type PythonValue = string | number | boolean;

/** Python's `str()` of the values the client is given. */
function pythonStr(value: PythonValue): string {
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  return String(value);
}

/** `urllib.parse.quote_plus`: only letters, digits and `_.-~` stay as they are. */
function quotePlus(text: string): string {
  return encodeURIComponent(text)
    .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/%20/g, '+');
}

/** The headers `requests` sends with every request (it decodes gzip and deflate answers, as fetch does). */
export const REQUESTS_HEADERS = { 'user-agent': 'python-requests/2.32.3', 'accept-encoding': 'gzip, deflate', accept: '*/*' };

export class HttpError extends Error {
  constructor(readonly status: number, readonly url: string) {
    super(`${status} for ${url}`);
  }
}

export interface Sent {
  url: string;
  status: number;
  redirected: boolean;
  headers: Headers;
}

export class BountiesEndpoint {
  private params = new Map<string, string[]>();
  /** Every request sent, as the server finally answered it. */
  readonly sent: Sent[] = [];

  constructor(
    private readonly url: string,
    private readonly legacyJoin = false,
  ) {}

  filter(values: Record<string, PythonValue>): this {
    for (const [name, value] of Object.entries(values)) this.add(name, value);
    return this;
  }

  /** Bypasses the client's list of names (its escape hatch for parameters it does not know). */
  addUnchecked(name: string, value: PythonValue): this {
    this.params.set(name, [...(this.params.get(name) ?? []), pythonStr(value)]);
    return this;
  }

  orderBy(sort: string): this {
    return this.add('order_by', sort);
  }

  getPage(number = 1, perPage = 25): Promise<unknown> {
    this.add('limit', perPage);
    this.add('offset', (number - 1) * perPage);
    return this.request(this.url);
  }

  all(): Promise<unknown> {
    this.params.delete('limit');
    this.params.delete('offset');
    return this.request(this.url);
  }

  get(pk: number): Promise<unknown> {
    return this.request(this.legacyJoin ? `${this.url}/${pk}` : `${this.url}${pk}`);
  }

  private add(name: string, value: PythonValue): this {
    if (!MULTI.has(name) && !SINGLE.has(name)) throw new Error(`Tried to filter by unknown param "${name}".`);
    if (SINGLE.has(name)) this.params.delete(name);
    return this.addUnchecked(name, value);
  }

  private async request(url: string): Promise<unknown> {
    const query = [...this.params].map(([name, values]) => `${quotePlus(name)}=${quotePlus(values.join(','))}`).join('&');
    const response = await fetch(query ? `${url}?${query}` : url, { redirect: 'follow', headers: REQUESTS_HEADERS });
    this.sent.push({ url: response.url, status: response.status, redirected: response.redirected, headers: response.headers });
    if (response.status >= 400) throw new HttpError(response.status, response.url);
    return response.json();
  }
}
