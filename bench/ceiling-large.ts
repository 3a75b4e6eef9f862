/**
 * The `ceiling-large` case: bare Fastify answering every request with the same pre-encoded
 * ~100 KB JSON body, the size of the bounties case's page (50 bounties of the benchmark's seed,
 * rendered as the API renders them), gzipped as the service sends a cached list to a client that
 * accepts gzip (about 15 KB; the case asks as the bounties case does). What a cached bounties
 * list cannot go below on this machine: the socket write of those bytes, and nothing else.
 */
import { gzipSync } from 'node:zlib';
import Fastify, { type FastifyInstance } from 'fastify';
import { bountyListJson } from '../src/publicdata/bounties/bounty-json.js';
import { bountyRow } from './bounties-seed.js';
import type { LoadCase } from './load.js';

const PAGE = 50;

/** The body: 50 bounties of the seed's generator, as one Buffer built once. */
export function ceilingLargeBody(): Buffer {
  let seed = 1;
  const random = () => ((seed = (seed * 48271) % 2147483647) / 2147483647);
  const owners = Array.from({ length: 300 }, (_, i) => `0x${i.toString(16).padStart(40, '0')}`);
  const rows = Array.from({ length: PAGE }, (_, i) => bountyRow(i + 1, random, owners));
  return Buffer.from(bountyListJson(rows, 'http://127.0.0.1:40000', Date.UTC(2026, 0, 1)), 'utf8');
}

export function ceilingLargeApp(): FastifyInstance {
  const app = Fastify({ logger: false });
  const body = ceilingLargeBody();
  const gzipBody = gzipSync(body);
  app.get('/', (request, reply) => {
    reply.type('application/json; charset=utf-8');
    if (!request.headers['accept-encoding']?.includes('gzip')) return reply.send(body);
    return reply.header('content-encoding', 'gzip').send(gzipBody);
  });
  return app;
}

export function ceilingLargeLoad(): Omit<LoadCase, 'url' | 'connections' | 'warmupSeconds' | 'seconds' | 'around'> {
  return {
    method: 'GET',
    headers: { 'accept-encoding': 'gzip, deflate' },
    path: () => '/',
    checkBody: (body) => ((JSON.parse(body) as unknown[]).length === PAGE ? null : 'wrong body'),
  };
}
