import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type pgTypes from "pg";

/** The oldest pg the peer range (`^8.11.0`) allows: the one without `queryMode`. */
export const OLDEST_PG = "8.11.0";

const folder = fileURLToPath(new URL(`../../node_modules/.cache/pg-${OLDEST_PG}/`, import.meta.url));

/**
 * The path of pg's entry at the oldest version in the peer range, installed once into a folder of its
 * own (beside the project's own pg, which stays the newest), for a test to run the store on it.
 */
export function oldestPgPath(): string {
  const entry = `${folder}node_modules/pg/lib/index.js`;
  if (!existsSync(entry)) {
    mkdirSync(folder, { recursive: true });
    writeFileSync(`${folder}package.json`, '{ "private": true }\n');
    execFileSync("npm", ["install", "--no-audit", "--no-fund", "--no-save", `pg@${OLDEST_PG}`], {
      cwd: folder,
      stdio: "ignore",
    });
  }
  return entry;
}

/** pg at the oldest version in the peer range. */
export async function oldestPg(): Promise<typeof pgTypes> {
  const pg = (await import(oldestPgPath())).default as typeof pgTypes & { Query: unknown };
  return pg;
}
