import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';

export interface ReceivedWebhook {
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/**
 * A real HTTP webhook receiver on loopback. `answer` decides each response (status, or `hold` to keep the
 * request open until the test releases it); every request is recorded with its raw body.
 */
export class WebhookReceiver {
  readonly received: ReceivedWebhook[] = [];
  readonly held: ServerResponse[] = [];
  answer: (request: ReceivedWebhook, index: number) => number | 'hold' = () => 200;
  #server: Server;
  #waiters: { count: number; resolve: () => void }[] = [];

  constructor() {
    this.#server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const request = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
        this.received.push(request);
        const answer = this.answer(request, this.received.length - 1);
        if (answer === 'hold') this.held.push(res);
        else res.writeHead(answer, { 'content-type': 'text/plain' }).end('ok');
        this.#waiters = this.#waiters.filter((waiter) => {
          if (this.received.length < waiter.count) return true;
          waiter.resolve();
          return false;
        });
      });
    });
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    const { port } = this.#server.address() as { port: number };
    return `http://127.0.0.1:${port}/hooks/stampgate`;
  }

  /** Resolves once `count` requests have arrived. */
  waitFor(count: number): Promise<void> {
    if (this.received.length >= count) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push({ count, resolve }));
  }

  async close(): Promise<void> {
    for (const res of this.held) res.destroy();
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}
