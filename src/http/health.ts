import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import type { Database } from '../db/connection.js';
import { pendingMigrations } from '../db/migrate.js';
import { AppError } from '../errors.js';
import { errorResponses } from './errors.js';
import type { ServiceLifecycle } from './lifecycle.js';

const HealthBody = Type.Object({ status: Type.Literal('ok') });

/** Something an operator should know that does not make the process unready (it still answers). */
export interface ReadinessWarning {
  code: string;
  detail: string;
}

const ReadyBody = Type.Object({
  status: Type.Literal('ok'),
  warnings: Type.Optional(
    Type.Array(
      Type.Object({
        code: Type.String({
          description:
            '`no_scoring_worker`: scoring jobs wait and no worker has looked for work within the threshold; `no_push_worker`: onchain push jobs wait and no worker holding their sender key has',
        }),
        detail: Type.String(),
      }),
      { description: 'Present only when there is something to report; the process is ready all the same' },
    ),
  ),
});

export function registerHealthRoutes(
  app: FastifyInstance,
  database: Database,
  lifecycle?: ServiceLifecycle,
  warnings: () => ReadinessWarning[] = () => [],
): void {
  app.get(
    '/health/live',
    { schema: { tags: ['health'], summary: 'The process is up', response: { 200: HealthBody } } },
    async () => ({ status: 'ok' as const }),
  );

  app.get(
    '/health/ready',
    {
      schema: {
        tags: ['health'],
        summary: 'The database is reachable and its schema is current',
        response: { 200: ReadyBody, ...errorResponses(503) },
      },
    },
    async (request) => {
      if (lifecycle?.state === 'starting') throw new AppError('not_ready', 'The service is starting: it is waiting for the database.');
      let pending: string[];
      try {
        await sql`select 1`.execute(database.db);
        pending = await pendingMigrations(database);
      } catch (error) {
        // During an outage the availability tracker has logged it once; a probe every few seconds
        // must not add a line each.
        if (!database.availability.observe(error)) request.log.warn({ err: error }, 'readiness check failed');
        throw new AppError('not_ready', 'The database is not reachable.');
      }
      if (pending.length > 0) throw new AppError('not_ready', 'Database migrations are pending.');
      const notes = warnings();
      return notes.length > 0 ? { status: 'ok' as const, warnings: notes } : { status: 'ok' as const };
    },
  );
}
