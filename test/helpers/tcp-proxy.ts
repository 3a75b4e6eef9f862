/**
 * A TCP proxy a test can cut: `cut()` resets every connection through it and refuses new ones
 * (as a database that went away would), `restore()` accepts them again on the same port.
 */
import { createServer, type Server, type Socket, connect } from 'node:net';

export interface TcpProxy {
  port: number;
  cut(): Promise<void>;
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  const makeServer = () =>
    createServer((client) => {
      const upstream = connect(targetPort, targetHost);
      for (const socket of [client, upstream]) {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
        socket.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream);
      upstream.pipe(client);
    });
  const listen = (server: Server, port: number) =>
    new Promise<number>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve((server.address() as { port: number }).port));
    });
  let server: Server | null = makeServer();
  const port = await listen(server, 0);
  const stop = async () => {
    const closing = server;
    server = null;
    if (closing) await new Promise<void>((resolve) => closing.close(() => resolve()));
  };
  return {
    port,
    async cut() {
      const closed = stop();
      for (const socket of sockets) socket.resetAndDestroy();
      sockets.clear();
      await closed;
    },
    async restore() {
      if (server) return;
      server = makeServer();
      await listen(server, port);
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await stop();
    },
  };
}
