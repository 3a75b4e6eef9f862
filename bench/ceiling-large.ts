/**
 * The `ceiling-large` case: bare Fastify answering every request with the same pre-encoded
 * ~100 KB JSON body, the size of the bounties case's page (50 bounties of the benchmark's seed,
 * rendered as the API renders them). What a cached bounties list cannot go below on this machine:
 * the socket write of 100 KB, and on the load generator's side the parse of every body (the
 * bounties case's check parses each body too, and so does this one's).
 */
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
  app.get('/', (_request, reply) => reply.type('application/json; charset=utf-8').send(body));
  return app;
}

export function ceilingLargeLoad(): Omit<LoadCase, 'url' | 'connections' | 'warmupSeconds' | 'seconds' | 'around'> {
  return {
    method: 'GET',
    headers: {},
    path: () => '/',
    checkBody: (body) => ((JSON.parse(body) as unknown[]).length === PAGE ? null : 'wrong body'),
  };
}
