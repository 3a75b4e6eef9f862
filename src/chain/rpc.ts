import { BaseError, createPublicClient, HttpRequestError, http, type PublicClient, TimeoutError } from 'viem';

/** Ethereum JSON-RPC plumbing shared by the staking indexer and the legacy bounty read. */

export interface RpcClientOptions {
  /** Per-request time limit. */
  timeoutMs?: number;
  /** Retries of a failed request (viem backs off exponentially between them). */
  retryCount?: number;
}

/** A viem public client over HTTP(S); no chain is needed for logs, block numbers and `eth_call`. */
export function createRpcClient(url: string, options: RpcClientOptions = {}): PublicClient {
  return createPublicClient({
    transport: http(url, { timeout: options.timeoutMs ?? 10_000, retryCount: options.retryCount ?? 1 }),
  }) as PublicClient;
}

/**
 * One client per endpoint URL, kept (a viem client holds no connection of its own), so that
 * repeated reads of the same chain do not rebuild it; the pool forgets everything past 64 URLs.
 */
export function rpcClientPool(options: RpcClientOptions): (url: string) => PublicClient {
  const clients = new Map<string, PublicClient>();
  return (url) => {
    let client = clients.get(url);
    if (!client) {
      if (clients.size >= 64) clients.clear();
      clients.set(url, (client = createRpcClient(url, options)));
    }
    return client;
  };
}

/**
 * How to name an endpoint in messages: scheme and host only, because RPC URLs
 * commonly carry an API key in their path or query.
 */
export function rpcEndpointName(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}`;
  } catch {
    return 'the configured endpoint';
  }
}

/** True when the endpoint could not be reached or did not answer in time (as opposed to answering with an error). */
export function isUnreachable(error: unknown): boolean {
  return error instanceof BaseError && error.walk((e) => e instanceof HttpRequestError || e instanceof TimeoutError) !== null;
}

/** A one-line reason for an RPC failure, without stack or request body. */
export function rpcFailureReason(error: unknown): string {
  if (error instanceof BaseError) {
    if (error.walk((e) => e instanceof TimeoutError)) return 'the request timed out';
    if (error.walk((e) => e instanceof HttpRequestError)) {
      const http = error.walk((e) => e instanceof HttpRequestError) as HttpRequestError;
      return http.status ? `the endpoint answered HTTP ${http.status}` : 'the endpoint could not be reached';
    }
    const reason = (error.shortMessage.split('\n')[0] ?? 'the request failed').replace(/\.$/, '');
    return reason.length > 200 ? `${reason.slice(0, 200)}…` : reason;
  }
  return 'the request failed';
}
