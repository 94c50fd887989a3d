import { fileURLToPath } from "node:url";
import { postgresStore } from "merchant-webhooks/postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deliver, deliverUntilSettled } from "../redis/fixtures/deliver.js";
import { type ReceiverProcess, spawnReceiver } from "../redis/fixtures/spawn-receiver.js";
import { notification } from "../support/notifications.js";
import { OLDEST_PG, oldestPgPath } from "../support/oldest-pg.js";
import { DATABASE_URL, dropSchema, freshSchema, testPool, uniqueSchema } from "../support/postgres.js";
import { eventually } from "../support/redis.js";
import { BYPASSES, type Bypass, type BypassForm } from "./fixtures/fence-bypasses.js";
import { receiverTablesSql } from "./fixtures/receiver-tables.js";

const script = fileURLToPath(new URL("./fixtures/receiver-process.ts", import.meta.url));
const forms = Object.keys(BYPASSES) as BypassForm[];

describe("a handler that COMMITs past the guard, then its process is killed", () => {
  const schema = uniqueSchema("fenceproc");
  const pool = testPool();
  const store = postgresStore({ connection: pool, schema });
  const spawned: ReceiverProcess[] = [];
  const spawn = async (env: Record<string, string>) => {
    const child = await spawnReceiver({ DATABASE_URL, SCHEMA: schema, ...env }, { script });
    spawned.push(child);
    return child;
  };
  let survivor: ReceiverProcess;
  beforeAll(async () => {
    await freshSchema(pool, schema, receiverTablesSql(schema));
    survivor = await spawn({});
  }, 60_000);
  afterAll(async () => {
    await Promise.all(spawned.map((child) => child.kill()));
    await dropSchema(pool, schema);
    await pool.end();
  });

  const rowsOf = async (id: string) =>
    Number(
      (await pool.query(`SELECT count(*)::int AS n FROM "${schema}".effects WHERE notification_id = $1`, [id])).rows[0]
        .n,
    );

  for (const { version, env, tried } of [
    // pg 8.11 throws (uncaught) on a reply to a query it did not send: the raw connection is no way there.
    { version: "the project's pg", env: () => ({}), tried: forms },
    {
      version: `pg ${OLDEST_PG} (no queryMode)`,
      env: () => ({ PG_MODULE: oldestPgPath() }),
      tried: forms.filter((form) => form !== "the raw connection"),
    },
  ]) {
    it(`on ${version}: one effect per notification after the kill and the redelivery elsewhere (${tried.join(", ")})`, async () => {
      const sent = new Map(tried.map((form) => [notification(), `${form}|COMMIT` as Bypass]));
      const bypasses = Object.fromEntries([...sent].map(([n, which]) => [n.id, which]));
      const doomed = await spawn({ ...env(), BYPASSES: JSON.stringify(bypasses) });
      for (const n of sent.keys()) void deliver(doomed.url, n).catch(() => {});
      // Every handler has inserted, sent its COMMIT and now hangs, its transaction open or not.
      const signalled = async () =>
        Number(
          (
            await pool.query(`SELECT count(*)::int AS n FROM "${schema}".signals WHERE notification_id = ANY($1)`, [
              Object.keys(bypasses),
            ])
          ).rows[0].n,
        );
      await eventually(async () => (await signalled()) === sent.size, 30_000, "every handler to send its COMMIT");
      await doomed.kill();

      const outcomes: Record<string, unknown> = {};
      for (const [n, which] of sent) {
        const answers = await deliverUntilSettled(survivor.url, n);
        outcomes[which] = { status: answers.at(-1)!.status, effects: await rowsOf(n.id) };
        expect(await store.get(n.id)).toMatchObject({ state: "completed" });
      }
      expect(outcomes).toEqual(
        Object.fromEntries([...sent.values()].map((which) => [which, { status: 200, effects: 1 }])),
      );
    }, 120_000);
  }
});
