import pg from "pg";
import { vi } from "vitest";

/**
 * Every message a pg client sends while `work` runs (a statement, or several in one simple-protocol
 * string): node-postgres sends the next only after the server's answer, so each is one round trip.
 * Knex, TypeORM and Kysely on the `pg` driver send through the same client.
 */
export async function messagesDuring(work: () => Promise<unknown>): Promise<string[]> {
  const sent: string[] = [];
  const original = pg.Client.prototype.query;
  const spy = vi.spyOn(pg.Client.prototype, "query").mockImplementation(function (this: pg.Client, ...args: never[]) {
    const config = args[0] as unknown;
    sent.push(typeof config === "string" ? config : String((config as { text?: string }).text));
    return (original as (...a: never[]) => unknown).apply(this, args);
  } as never);
  try {
    await work();
  } finally {
    spy.mockRestore();
  }
  return sent;
}
