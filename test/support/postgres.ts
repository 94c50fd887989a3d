import { migrate } from "merchant-webhooks/postgres";
import pg from "pg";

export const DATABASE_URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

/** A schema name of its own per test file, so parallel files and runs never share tables. */
export function uniqueSchema(label: string): string {
  return `mw_${label}_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
}

export function testPool(max = 10): pg.Pool {
  return new pg.Pool({ connectionString: DATABASE_URL, max });
}

/** Create the schema with the inbox tables in it (and `extraSql`, the merchant's own tables). */
export async function freshSchema(pool: pg.Pool, schema: string, extraSql = ""): Promise<void> {
  await migrate(pool, { schema });
  if (extraSql) await pool.query(extraSql);
}

export async function dropSchema(pool: pg.Pool, schema: string): Promise<void> {
  await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
}
