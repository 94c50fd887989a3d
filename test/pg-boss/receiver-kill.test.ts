import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { createReceiver } from "merchant-webhooks";
import { createPgBossWorker, pgBossJobIdFor, pgBossQueue } from "merchant-webhooks/pg-boss";
import { describe, expect, it } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { json, notification } from "../support/notifications.js";
import { DATABASE_URL } from "../support/postgres.js";
import { eventually } from "../support/redis.js";
import { pgBossBed } from "./fixtures/bed.js";

const script = fileURLToPath(new URL("./fixtures/receiver-process.ts", import.meta.url));
const root = fileURLToPath(new URL("../../", import.meta.url));

describe("a receiver killed between the claim and the commit", () => {
  const bed = pgBossBed("pgbrecv", (schema) => `CREATE TABLE "${schema}".effects (notification_id text NOT NULL)`);
  const { schema, bossSchema, pool, store } = bed;

  it("leaves, for every notification, either its record and its job or neither; the redelivery runs it once", async () => {
    const sent = Array.from({ length: 30 }, () => notification());
    const held = sent[20]!;
    const child = spawn(process.execPath, ["--import", "tsx", script], {
      cwd: root,
      env: { ...process.env, DATABASE_URL, SCHEMA: schema, BOSS_SCHEMA: bossSchema, QUEUE: "recv", HOLD_ID: held.id },
      stdio: ["pipe", "pipe", "pipe"],
    });
    const exited = new Promise((resolve) => child.once("exit", resolve));
    let out = "";
    child.stdout.on("data", (chunk) => (out += chunk));
    await eventually(async () => out.includes("ready"), 20_000, "the receiver process to start");
    for (const body of sent) child.stdin.write(`${JSON.stringify(body)}\n`);
    // Killed with the held notification's claim and job inserted in its transaction, not committed.
    await eventually(async () => out.includes(`inserted ${held.id}`), 20_000, "the held job to be inserted");
    child.kill("SIGKILL");
    await exited;

    const answered = new Set([...out.matchAll(/answered (\S+) 200/g)].map((match) => match[1]));
    expect(answered.size).toBe(20);
    for (const body of sent) {
      const record = await store.get(body.id);
      const job = await bed.boss.getJobById("recv", pgBossJobIdFor("recv", body.id));
      // All three committed together, or nothing at all.
      expect({ id: body.id, record: record !== undefined, job: job !== null }).toEqual({
        id: body.id,
        record: answered.has(body.id),
        job: answered.has(body.id),
      });
      if (record) expect(record.state).toBe("queued");
    }

    // The sender keeps what was not acknowledged and delivers it again: it runs, once.
    const receiver = createReceiver({
      logger: silentLogger(),
      idempotency: store,
      queue: pgBossQueue({ boss: bed.boss, name: "recv", schema: bossSchema }),
    });
    const again = await receiver.handle({
      method: "POST",
      headers: { "content-type": "application/json" },
      rawBody: json(held),
    });
    expect(again.status).toBe(200);
    const worker = createPgBossWorker({
      boss: bed.boss,
      name: "recv",
      schema: bossSchema,
      idempotency: store,
      logger: silentLogger(),
      pollingIntervalMs: 100,
      onRenew: async (n, ctx) => {
        await ctx.transaction.query(`INSERT INTO "${schema}".effects (notification_id) VALUES ($1)`, [n.id]);
      },
    });
    const acknowledged = [...answered, held.id];
    await eventually(
      async () =>
        (
          await pool.query(
            `SELECT count(*)::int AS n FROM "${schema}".merchant_webhooks_inbox WHERE state = 'completed' AND id = ANY($1)`,
            [acknowledged],
          )
        ).rows[0].n === acknowledged.length,
      20_000,
      "every acknowledged notification to complete",
    );
    const effects = (await pool.query(`SELECT notification_id FROM "${schema}".effects`)).rows.map(
      (row) => row.notification_id,
    );
    expect(effects.sort()).toEqual(acknowledged.sort());
    await worker.close({ timeoutMs: 5_000 });
    await receiver.close();
  }, 60_000);
});
