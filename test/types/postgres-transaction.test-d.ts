import { createReceiver, type HandlerContext } from "merchant-webhooks";
import { postgresStore } from "merchant-webhooks/postgres";
import type pg from "pg";
import { expectTypeOf, test } from "vitest";

// Importing merchant-webhooks/postgres types ctx.transaction as the pool client of the open transaction.
test("ctx.transaction is a pg.PoolClient once merchant-webhooks/postgres is imported", () => {
  expectTypeOf<HandlerContext["transaction"]>().toEqualTypeOf<pg.PoolClient>();
  createReceiver({
    idempotency: postgresStore({ connection: {} as pg.Pool }),
    onRenew: async (notification, ctx) => {
      expectTypeOf(ctx.transaction).toEqualTypeOf<pg.PoolClient>();
      await ctx.transaction.query("update subscriptions set paid_until = $1 where id = $2", [
        notification.resource.update_time,
        notification.resource.id,
      ]);
    },
  });
});
