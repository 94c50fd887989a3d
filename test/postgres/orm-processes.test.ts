import { fileURLToPath } from "node:url";
import { postgresStore } from "merchant-webhooks/postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deliver, deliverPast503 } from "../redis/fixtures/deliver.js";
import { type ReceiverProcess, spawnReceiver } from "../redis/fixtures/spawn-receiver.js";
import { notification } from "../support/notifications.js";
import { DATABASE_URL, dropSchema, freshSchema, testPool, uniqueSchema } from "../support/postgres.js";
import { eventually } from "../support/redis.js";
import { ALL_ORMS } from "./fixtures/orm-adapters.js";
import { receiverTablesSql } from "./fixtures/receiver-tables.js";

const script = fileURLToPath(new URL("./fixtures/orm-receiver-process.ts", import.meta.url));

describe.each(Object.keys(ALL_ORMS))(
  "a receiver writing through %s, killed inside the ORM's transaction",
  (ormName) => {
    const schema = uniqueSchema(`ormkill_${ormName}`);
    const pool = testPool();
    const store = postgresStore({ connection: pool, schema });
    const spawned: ReceiverProcess[] = [];
    const spawn = async (extra: Record<string, string> = {}) => {
      const child = await spawnReceiver({ DATABASE_URL, SCHEMA: schema, ORM: ormName, ...extra }, { script });
      spawned.push(child);
      return child;
    };

    const hung = notification();
    let doomed: ReceiverProcess;
    let survivor: ReceiverProcess;

    beforeAll(async () => {
      await freshSchema(pool, schema, receiverTablesSql(schema));
      [doomed, survivor] = await Promise.all([spawn({ HANG_AFTER_INSERT_ID: hung.id }), spawn()]);
    }, 60_000);
    afterAll(async () => {
      await Promise.all(spawned.map((child) => child.kill()));
      await dropSchema(pool, schema);
      await pool.end();
    });

    const rowsOf = async (id: string) =>
      Number(
        (await pool.query(`SELECT count(*) FROM "${schema}".effects WHERE notification_id = $1`, [id])).rows[0].count,
      );

    it("leaves no effect and no record after SIGKILL; the redelivery runs at once, once", {
      timeout: 60_000,
    }, async () => {
      void deliver(doomed.url, hung).catch(() => {}); // its connection dies with the process
      const signal = async () =>
        (await pool.query(`SELECT backend FROM "${schema}".signals WHERE notification_id = $1`, [hung.id])).rows[0];
      await eventually(async () => (await signal()) !== undefined, 15_000, "the handler to insert");
      const { backend } = await signal();
      // Written in the ORM's open transaction: neither the effect nor the claim is visible.
      expect(await rowsOf(hung.id)).toBe(0);
      expect(await store.get(hung.id)).toBeUndefined();
      await doomed.kill();
      await eventually(
        async () => (await pool.query("SELECT 1 FROM pg_stat_activity WHERE pid = $1", [backend])).rowCount === 0,
        15_000,
        "the database to drop the dead connection",
      );
      expect(await rowsOf(hung.id)).toBe(0);
      expect(await store.get(hung.id)).toBeUndefined();
      // No lease to wait for (a minute here): the lock died with the transaction.
      expect(await deliverPast503(survivor.url, hung)).toMatchObject({ status: 200, body: { processed: true } });
      expect(await rowsOf(hung.id)).toBe(1);
      expect(await store.get(hung.id)).toMatchObject({ state: "completed", attempts: 1 });
    });
  },
);
