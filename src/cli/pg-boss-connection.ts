import type PgBoss from "pg-boss";

/**
 * A PgBoss of the CLI's own on the merchant's database, started without maintenance, scheduling or
 * migrations (it changes nothing but the jobs a command moves). pg-boss is an optional peer, loaded
 * here; the caller stops it with `closeBoss`.
 */
export async function openBoss(url: string, schema: string | undefined): Promise<PgBoss> {
  const PgBossClass = (await import("pg-boss")).default;
  const boss = new PgBossClass({
    connectionString: url,
    ...(schema ? { schema } : {}),
    supervise: false,
    schedule: false,
    migrate: false,
    max: 2,
  });
  boss.on("error", () => {}); // failures reach the calls made on it, and are reported once there
  return boss;
}

export async function closeBoss(boss: PgBoss): Promise<void> {
  await boss.stop({ graceful: false }).catch(() => {});
  // A start that failed (no pg-boss schema there) has opened its pool without stopping it.
  await (boss.getDb() as { close?: () => Promise<void> }).close?.().catch(() => {});
}

/** The database as a message may name it: host, port and database, never the password. */
export function describeDatabase(url: string): string {
  try {
    const parsed = new URL(url);
    return `PostgreSQL at ${parsed.hostname}${parsed.port ? `:${parsed.port}` : ""}${parsed.pathname}`;
  } catch {
    return "PostgreSQL";
  }
}
