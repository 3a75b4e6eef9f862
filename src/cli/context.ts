import { type AppContext, type ContextOptions, createAppContext } from '../app/container.js';
import { loadConfig, type Config } from '../config/index.js';
import type { AvailabilityLog } from '../db/availability.js';
import { isDatabaseUnavailable } from '../db/availability.js';
import { type Database, openDatabase } from '../db/connection.js';
import { migrateToLatest } from '../db/migrate.js';
import { snakeCaseJson } from './json-output.js';
import { pause } from './shutdown.js';

/** A refusal of the command's arguments or files, found before anything was done: exit code 2, the message alone. */
export class UsageError extends Error {
  override name = 'UsageError';
}

export interface CliIo {
  out(line: string): void;
  err(line: string): void;
  env: NodeJS.ProcessEnv;
}

/** Opens the configured database (migrated), runs `work`, and closes it again. */
export async function withAppContext<T>(io: CliIo, work: (ctx: AppContext) => Promise<T>): Promise<T> {
  const ctx = await openAppContext(loadConfig(io.env));
  try {
    return await work(ctx);
  } finally {
    await ctx.close();
  }
}

export async function openAppContext(config: Config, options: ContextOptions = {}): Promise<AppContext> {
  const database = openConfiguredDatabase(config, options.log);
  try {
    await migrateToLatest(database);
  } catch (error) {
    await database.close();
    throw error;
  }
  try {
    return await createAppContext(config, database, options);
  } catch (error) {
    await database.close();
    throw error;
  }
}

/** The configured database; a long-running process (serve, worker) checkpoints SQLite's WAL on a thread of its own. */
export function openConfiguredDatabase(config: Config, log?: AvailabilityLog, longRunning = false): Database {
  return openDatabase(config.databaseUrl, {
    backgroundCheckpoints: longRunning,
    connectTimeoutMs: config.databaseConnectTimeoutMs,
    queryTimeoutMs: config.databaseQueryTimeoutMs,
    poolSize: config.databasePoolSize,
    preparedStatements: config.databasePreparedStatements,
    ...(log ? { log } : {}),
  });
}

/**
 * The context of a long-running command, before the database is known to answer (nothing in it
 * touches the database until used): the command can serve its health checks meanwhile and then
 * call `waitForDatabase`.
 */
export async function createServiceContext(config: Config, options: ContextOptions & { log: AvailabilityLog }): Promise<AppContext> {
  const database = openConfiguredDatabase(config, options.log, true);
  try {
    return await createAppContext(config, database, options);
  } catch (error) {
    await database.close();
    throw error;
  }
}

const firstRetryMs = 1000;
const longestRetryMs = 30_000;

/**
 * Migrates the database, trying again with backoff (1 s doubling to 30 s, one line per attempt)
 * while it is unreachable. Returns false when `stop` is aborted first (a signal during start-up);
 * any other error (a failed migration) is thrown.
 */
export async function waitForDatabase(database: Database, log: AvailabilityLog, stop: AbortSignal): Promise<boolean> {
  let delayMs = firstRetryMs;
  for (let attempt = 1; ; attempt++) {
    if (stop.aborted) return false;
    try {
      await migrateToLatest(database);
      if (attempt > 1) log.info({ attempt }, 'database reachable: starting');
      return true;
    } catch (error) {
      if (!isDatabaseUnavailable(error)) throw error;
      log.warn(
        { attempt, retryInMs: delayMs, err: (error as Error).message },
        `database not reachable at start-up (attempt ${attempt}); trying again in ${delayMs / 1000} s`,
      );
      if (!(await pause(delayMs, stop))) return false;
      delayMs = Math.min(delayMs * 2, longestRetryMs);
    }
  }
}

/** Prints `value` as JSON with `--json` (snake_case keys, as the HTTP API spells them), otherwise the human lines. */
export function report(io: CliIo, json: boolean, value: unknown, human: () => string[]): void {
  if (json) io.out(JSON.stringify(snakeCaseJson(value), null, 2));
  else for (const line of human()) io.out(line);
}
