import { createReceiver } from "merchant-webhooks";
import { postgresStore } from "merchant-webhooks/postgres";
import { buildNotification } from "merchant-webhooks/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { deliverUntilAccepted } from "../support/notifications.js";
import { dropSchema, freshSchema, testPool, uniqueSchema } from "../support/postgres.js";

const schema = uniqueSchema("order");
const pool = testPool();

beforeAll(async () => {
  await freshSchema(
    pool,
    schema,
    `CREATE TABLE "${schema}".effects (seq serial PRIMARY KEY, notification_id text NOT NULL, position text NOT NULL);
     CREATE TABLE "${schema}".stale (notification_id text NOT NULL)`,
  );
});
afterAll(async () => {
  await dropSchema(pool, schema);
  await pool.end();
});

/** A fixed shuffle, so a failure can be run again as it was. */
function shuffled<T>(items: T[], seed = 7): T[] {
  const copy = [...items];
  let state = seed;
  for (let i = copy.length - 1; i > 0; i--) {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    const j = state % (i + 1);
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy;
}

describe("ordering on postgresStore: the position moves in the handler's transaction", () => {
  it("applies shuffled deliveries of one subscription in position order, sends the older ones to onStale, and loses none", async () => {
    const sub = `SUB-${process.pid}-order`;
    const times = Array.from({ length: 30 }, (_, i) => `2026-03-01T02:${String(i).padStart(2, "0")}:00Z`);
    const sent = times.map((time) =>
      buildNotification("SUBSCRIPTION_RENEW", { resource: { id: sub, update_time: time } }, { random: true }),
    );
    const receiver = createReceiver({
      idempotency: postgresStore({ connection: pool, schema }),
      logger: silentLogger(),
      ordering: true,
      onRenew: async (n, ctx) => {
        await ctx.transaction.query(`INSERT INTO "${schema}".effects (notification_id, position) VALUES ($1, $2)`, [
          n.id,
          n.resource.update_time,
        ]);
      },
      onStale: async (n, ctx) => {
        await ctx.transaction.query(`INSERT INTO "${schema}".stale (notification_id) VALUES ($1)`, [n.id]);
      },
    });
    // Five at a time, in shuffled order; a 409 (the subscription is busy) is delivered again, as the sender would.
    const order = shuffled(sent);
    for (let at = 0; at < order.length; at += 5) {
      await Promise.all(order.slice(at, at + 5).map((n) => deliverUntilAccepted(receiver, n, 10)));
    }
    const effects = (await pool.query(`SELECT notification_id, position FROM "${schema}".effects ORDER BY seq`)).rows;
    const stale = (await pool.query(`SELECT notification_id FROM "${schema}".stale`)).rows;
    const positions = effects.map((row) => Date.parse(row.position));
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
    expect(stale.length).toBeGreaterThan(0);
    expect(effects.length).toBeGreaterThan(1);
    // Every notification is either an effect or stale, exactly once.
    const seen = [...effects, ...stale].map((row) => row.notification_id).sort();
    expect(seen).toEqual(sent.map((n) => n.id).sort());
    // The newest one always takes effect, and the stored position is the newest.
    expect(effects.at(-1)!.notification_id).toBe(sent.at(-1)!.id);
    const [position] = (
      await pool.query(`SELECT position FROM "${schema}".merchant_webhooks_inbox_positions WHERE order_key LIKE $1`, [
        `%${sub}%`,
      ])
    ).rows;
    expect(position.position).toBe("2026-03-01T02:29:00");
  });
});
