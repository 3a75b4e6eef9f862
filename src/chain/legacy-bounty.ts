import { type Address, BaseError, formatUnits, getAddress, parseAbi, type PublicClient, zeroAddress } from 'viem';
import { AppError } from '../errors.js';
import { createRpcClient, isUnreachable, rpcEndpointName, rpcFailureReason } from './rpc.js';

/**
 * The legacy bounty read: `bountydetails(string)` on the bounty index contract,
 * called with `eth_call` and mapped to the legacy contract record of the public
 * data interface.
 */
export const bountyIndexAbi = parseAbi([
  'function bountydetails(string issueURL) view returns (uint256 amount, address tokenAddress, address bountyOwner, address claimee, bool open, bool initialized, string issueURL, uint256 creationTime, string metaData, uint256 expirationTime, string claimeeMetaData)',
]);

const erc20Abi = parseAbi(['function decimals() view returns (uint8)', 'function symbol() view returns (string)']);

/** The legacy contract record. */
export interface LegacyBountyRecord {
  /** In whole units of the denomination (wei / 10^18 for ETH, / 10^decimals for a token). */
  amount: number;
  amount_denomination: string;
  action_url: string;
  title: string;
  description: string;
  /** date_time: ISO 8601 with milliseconds and Z. */
  created_on: string;
  /** `org/repo` of a github-style issue URL, else "". */
  source_project: string;
  tags: string[];
}

/** The index keys bounties by the issue URL ending with `/`, appended when missing (as the contract does). */
export function normalizeIssueUrl(url: string): string {
  return url.endsWith('/') ? url : `${url}/`;
}

/** `org/repo` from `https://github.com/org/repo/issues/12` (the first two path segments), else "". */
export function sourceProject(url: string): string {
  try {
    const segments = new URL(url).pathname.split('/').filter(Boolean);
    return segments.length >= 2 ? `${decodeURIComponent(segments[0]!)}/${decodeURIComponent(segments[1]!)}` : '';
  } catch {
    return '';
  }
}

/** Metadata is JSON text; anything that is not a JSON object reads as empty. */
function parseMetadata(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

const text = (value: unknown): string => (typeof value === 'string' ? value : '');

/** `issueKeywords` split on commas (an array of strings is accepted too), trimmed, empty ones dropped. */
export function keywordTags(value: unknown): string[] {
  const parts = typeof value === 'string' ? value.split(',') : Array.isArray(value) ? value.filter((v) => typeof v === 'string') : [];
  return parts.map((t: string) => t.trim()).filter((t: string) => t.length > 0);
}

/** The largest creation time a JavaScript Date can show, in seconds. */
const MAX_DATE_SECONDS = 8_640_000_000_000n;

function rpcError(rpcUrl: string | null, what: string, error: unknown): AppError {
  const where = rpcUrl ? ` ${rpcEndpointName(rpcUrl)}` : '';
  if (isUnreachable(error)) {
    return new AppError('upstream_unavailable', `The Ethereum RPC endpoint${where} could not be reached to ${what}: ${rpcFailureReason(error)}.`);
  }
  return new AppError('upstream_unavailable', `The Ethereum RPC endpoint${where} answered with an error to ${what}: ${rpcFailureReason(error)}.`);
}

/**
 * Decimals of an ERC-20 token via `decimals()`; 18 when the address does not
 * answer it (no contract, no such function, a revert). An unreachable endpoint is
 * an error, never silently 18.
 */
async function tokenDecimals(client: PublicClient, token: Address, rpcUrl: string | null): Promise<number> {
  try {
    return Number(await client.readContract({ address: token, abi: erc20Abi, functionName: 'decimals' }));
  } catch (error) {
    if (isUnreachable(error)) throw rpcError(rpcUrl, 'read the token decimals', error);
    return 18;
  }
}

async function tokenSymbol(client: PublicClient, token: Address, rpcUrl: string | null): Promise<string | null> {
  try {
    const symbol = await client.readContract({ address: token, abi: erc20Abi, functionName: 'symbol' });
    return symbol.trim() === '' ? null : symbol;
  } catch (error) {
    if (isUnreachable(error)) throw rpcError(rpcUrl, 'read the token symbol', error);
    return null;
  }
}

/**
 * Reads the bounty posted for `issueUrl` from the index contract at `indexAddress`.
 * Returns null when the index has no bounty for it (`initialized` false). Throws
 * `AppError('upstream_unavailable')` when the endpoint is unreachable or the call
 * fails (for example no contract at the address).
 *
 * Amount: the integer amount divided by 10^18 for ETH (zero token address), or by
 * 10^decimals of the token (ERC-20 `decimals()`, 18 when the token does not answer).
 * Denomination: metadata `tokenName`; without it `ETH` for the zero address, else the
 * token's `symbol()`, else the token address.
 */
export async function readLegacyBounty(
  clientOrUrl: PublicClient | string,
  indexAddress: string,
  issueUrl: string,
): Promise<LegacyBountyRecord | null> {
  if (typeof clientOrUrl === 'string') return readWith(createRpcClient(clientOrUrl, { retryCount: 0 }), clientOrUrl, indexAddress, issueUrl);
  return readWith(clientOrUrl, null, indexAddress, issueUrl);
}

/** `rpcUrl` only names the endpoint in messages (scheme and host). */
async function readWith(client: PublicClient, rpcUrl: string | null, indexAddress: string, issueUrl: string): Promise<LegacyBountyRecord | null> {
  if (!/^0x[0-9a-fA-F]{40}$/.test(indexAddress)) {
    throw new AppError('invalid_request', `The bounty index address "${indexAddress}" is not 0x followed by 40 hexadecimal digits.`);
  }
  const url = normalizeIssueUrl(issueUrl);
  let details: readonly [bigint, Address, Address, Address, boolean, boolean, string, bigint, string, bigint, string];
  try {
    details = await client.readContract({
      address: getAddress(indexAddress.toLowerCase()),
      abi: bountyIndexAbi,
      functionName: 'bountydetails',
      args: [url],
    });
  } catch (error) {
    if (error instanceof BaseError && !isUnreachable(error)) {
      throw new AppError(
        'upstream_unavailable',
        `The legacy bounty index ${indexAddress.toLowerCase()} could not be read (${rpcFailureReason(error)}); is it the bounty index contract on this chain?`,
      );
    }
    throw rpcError(rpcUrl, 'read the legacy bounty index', error);
  }
  const [amount, tokenAddress, , , , initialized, storedUrl, creationTime, metaData] = details;
  if (!initialized) return null;
  if (creationTime > MAX_DATE_SECONDS) {
    throw new AppError('upstream_unavailable', 'The legacy bounty index returned a creation time that is not a date.');
  }

  const metadata = parseMetadata(metaData);
  const isEth = tokenAddress.toLowerCase() === zeroAddress;
  const decimals = isEth ? 18 : await tokenDecimals(client, tokenAddress, rpcUrl);
  const denomination =
    text(metadata.tokenName).trim() || (isEth ? 'ETH' : ((await tokenSymbol(client, tokenAddress, rpcUrl)) ?? tokenAddress.toLowerCase()));
  const actionUrl = storedUrl || url;
  return {
    // formatUnits gives the exact decimal; Number() rounds it once, to the nearest double.
    amount: Number(formatUnits(amount, decimals)),
    amount_denomination: denomination,
    action_url: actionUrl,
    title: text(metadata.issueTitle),
    description: text(metadata.issueDescription),
    created_on: new Date(Number(creationTime) * 1000).toISOString(),
    source_project: sourceProject(actionUrl),
    tags: keywordTags(metadata.issueKeywords),
  };
}

/** Largest issue URL accepted by the HTTP read. */
export const MAX_ISSUE_URL_LENGTH = 2000;

/**
 * The legacy read as the HTTP route uses it: configuration from ETH_RPC_URL and
 * LEGACY_BOUNTY_INDEX_ADDRESS, refusals as AppErrors (404 when unconfigured or not
 * posted, 400 for a bad URL, 502 when the chain cannot be read).
 */
export function legacyBountyReader(options: { rpcUrl: string | null; indexAddress: string | null; timeoutMs?: number }) {
  const { rpcUrl, indexAddress } = options;
  const client = rpcUrl ? createRpcClient(rpcUrl, { timeoutMs: options.timeoutMs ?? 10_000, retryCount: 0 }) : null;
  return {
    configured: client !== null && indexAddress !== null,

    async read(issueUrl: string): Promise<LegacyBountyRecord> {
      if (!client || !indexAddress) {
        throw new AppError(
          'not_found',
          'The legacy bounty read is not configured on this server (ETH_RPC_URL and LEGACY_BOUNTY_INDEX_ADDRESS are unset).',
        );
      }
      let parsed: URL | null;
      try {
        parsed = new URL(issueUrl);
      } catch {
        parsed = null;
      }
      if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') || issueUrl.length > MAX_ISSUE_URL_LENGTH) {
        throw new AppError('invalid_parameter', `url must be an absolute http(s) URL of at most ${MAX_ISSUE_URL_LENGTH} characters.`);
      }
      const record = await readWith(client, rpcUrl, indexAddress, issueUrl);
      if (!record) throw new AppError('not_found', `No legacy bounty is posted for ${normalizeIssueUrl(issueUrl)}.`);
      return record;
    },
  };
}

export type LegacyBountyReader = ReturnType<typeof legacyBountyReader>;
