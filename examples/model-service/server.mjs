/**
 * A reference model service for the Models API (docs/models.md), plain Node, no dependencies.
 * `POST /` with `{"address":"0x…"}` → `{"score": 0..100, "num_transactions", "first_funder"}`, derived
 * deterministically from the address (a stand-in for a real model). `GET /calls` → `{"calls": n}`, how many
 * scores it has answered (tests count calls with it). Run: `node examples/model-service/server.mjs [port]`.
 */
import { createServer } from 'node:http';
import { createHash } from 'node:crypto';

export function scoreOf(address) {
  const digest = createHash('sha256').update(address.toLowerCase()).digest();
  return { score: digest[0] % 101, num_transactions: digest.readUInt16BE(1), first_funder: `0x${digest.subarray(3, 23).toString('hex')}` };
}

export function createModelService() {
  let calls = 0;
  const server = createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/calls') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ calls }));
      return;
    }
    if (req.method !== 'POST') return void res.writeHead(405).end();
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk) => {
      body += chunk;
      if (body.length > 1024) req.destroy();
    });
    req.on('end', () => {
      let address;
      try {
        address = JSON.parse(body).address;
      } catch {
        address = undefined;
      }
      if (typeof address !== 'string' || !/^0x[0-9a-fA-F]{40}$/.test(address)) {
        res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'address must be 0x and 40 hex digits' }));
        return;
      }
      calls += 1;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(scoreOf(address)));
    });
  });
  return { server, calls: () => calls };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const port = Number(process.argv[2] ?? 8123);
  createModelService().server.listen(port, '127.0.0.1', () => console.log(`model service on http://127.0.0.1:${port}/`));
}
