import { type AppContext, type ContextOptions, createAppContext } from '../app-context.js';
import { loadConfig, type Config } from '../config.js';
import { openDatabase } from '../db/connection.js';
import { migrateToLatest } from '../db/migrate.js';

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
  const database = openDatabase(config.databaseUrl);
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

/** Prints `value` as JSON with `--json`, otherwise the human lines. */
export function report(io: CliIo, json: boolean, value: unknown, human: () => string[]): void {
  if (json) io.out(JSON.stringify(value, null, 2));
  else for (const line of human()) io.out(line);
}
