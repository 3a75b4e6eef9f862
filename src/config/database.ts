import { availableParallelism } from 'node:os';
/** Database connection settings. */
import { databaseUrl, flag, integer, type Settings } from './parse.js';

export interface DatabaseConfig {
  databaseUrl: string;
  databaseConnectTimeoutMs: number;
  databaseQueryTimeoutMs: number;
  databasePoolSize: number;
  databasePreparedStatements: boolean;
}

export const databaseSettings: Settings<DatabaseConfig> = {
  databaseUrl: {
    key: 'databaseUrl',
    name: 'DATABASE_URL',
    description: '`sqlite:<file>` for the embedded database, or `postgres://user@host:5432/db` for PostgreSQL',
    defaultText: 'sqlite:<DATA_DIR>/stampgate.sqlite',
    parse: databaseUrl,
  },

  databaseConnectTimeoutMs: {
    key: 'databaseConnectTimeoutMs',
    name: 'DATABASE_CONNECT_TIMEOUT_MS',
    description: 'How long opening a PostgreSQL connection, or waiting for a free pooled one, may take before the request is answered 503 `database_unavailable`',
    defaultText: '1000',
    parse: integer('DATABASE_CONNECT_TIMEOUT_MS', 100, 60_000, 1000),
  },

  databaseQueryTimeoutMs: {
    key: 'databaseQueryTimeoutMs',
    name: 'DATABASE_QUERY_TIMEOUT_MS',
    description:
      'How long one statement (PostgreSQL `statement_timeout`, SQLite lock wait) may take before it fails with 503 `database_unavailable`',
    defaultText: '5000',
    parse: integer('DATABASE_QUERY_TIMEOUT_MS', 100, 600_000, 5000),
  },

  databasePoolSize: {
    key: 'databasePoolSize',
    name: 'DATABASE_POOL_SIZE',
    description:
      'PostgreSQL connections one process keeps (SQLite uses one). More connections than the database server has cores only queue inside it; requests past the pool wait for a free connection up to DATABASE_CONNECT_TIMEOUT_MS',
    defaultText: '2 × the cores of this machine + 2, from 6 to 10',
    parse: integer('DATABASE_POOL_SIZE', 1, 1000, defaultPoolSize()),
  },

  databasePreparedStatements: {
    key: 'databasePreparedStatements',
    name: 'DATABASE_PREPARED_STATEMENTS',
    description:
      'PostgreSQL: run parameterised statements as named prepared statements, parsed and planned once per connection. Turn off behind a transaction-mode pooler (PgBouncer `pool_mode=transaction`), where the next statement may reach another server session',
    defaultText: 'true',
    parse: flag('DATABASE_PREPARED_STATEMENTS', true),
  },
};

/** Enough for every core to have a query running while another waits on the network. */
export function defaultPoolSize(): number {
  // Capped at the former fixed size: several processes of a large machine must stay well under
  // PostgreSQL's stock max_connections (100), each also holding one LISTEN connection.
  return Math.min(10, Math.max(6, 2 * availableParallelism() + 2));
}
