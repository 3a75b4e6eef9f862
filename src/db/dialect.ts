import type { ColumnDefinitionBuilder, CreateTableBuilder } from 'kysely';

/**
 * The one place where SQLite and PostgreSQL differ. Everything else (schema,
 * queries) is written once against Kysely and runs on both.
 */
export type DialectName = 'sqlite' | 'postgres';

/** Adds an auto-incrementing integer primary key named `id`. */
export function withIdColumn<T extends string>(
  dialect: DialectName,
  table: CreateTableBuilder<T, never>,
): CreateTableBuilder<T, 'id'> {
  return dialect === 'postgres'
    ? table.addColumn('id', 'integer', (c: ColumnDefinitionBuilder) => c.primaryKey().generatedByDefaultAsIdentity())
    : table.addColumn('id', 'integer', (c: ColumnDefinitionBuilder) => c.primaryKey().autoIncrement());
}

/** Epoch-millisecond columns: `bigint` on PostgreSQL (parsed back to number), `integer` on SQLite. */
export const timeColumnType = 'bigint' as const;

/**
 * Row locking for queue claims. PostgreSQL skips rows other transactions have
 * locked, so concurrent workers never wait on or take the same job; SQLite has
 * one writer at a time and needs nothing.
 */
export function lockSkippingLocked<Q extends { forUpdate(): Q; skipLocked(): Q }>(dialect: DialectName, query: Q): Q {
  return dialect === 'postgres' ? query.forUpdate().skipLocked() : query;
}
