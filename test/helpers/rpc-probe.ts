import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * A JSON-RPC endpoint in front of a real node, under the test's control: it counts the
 * requests it gets (to prove a path never asked the node), and can forward them, never
 * answer, answer HTTP 500, or answer every call with a JSON-RPC error.
 */
export type ProbeMode = 'forward' | 'hang' | 'http-500' | 'rpc-error';

export interface RpcProbe {
  url: string;
  /** JSON-RPC requests received so far. */
  readonly requests: number;
  mode: ProbeMode;
  close(): Promise<void>;
}

async function bodyOf(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function startRpcProbe(upstreamUrl: string | null, mode: ProbeMode = 'forward'): Promise<RpcProbe> {
  let requests = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    void (async () => {
      const body = await bodyOf(req);
      requests += 1;
      if (probe.mode === 'hang') return; // The socket stays open until close().
      if (probe.mode === 'http-500') {
        res.writeHead(500, { 'content-type': 'text/plain' }).end('upstream exploded');
        return;
      }
      if (probe.mode === 'rpc-error' || !upstreamUrl) {
        const { id } = JSON.parse(body) as { id: unknown };
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32601, message: 'the method eth_call does not exist' } }));
        return;
      }
      const upstream = await fetch(upstreamUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      res.writeHead(upstream.status, { 'content-type': 'application/json' }).end(await upstream.text());
    })();
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const probe: RpcProbe = {
    url: `http://127.0.0.1:${port}`,
    get requests() {
      return requests;
    },
    mode,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
  return probe;
}
