import { createReceiver } from "merchant-webhooks";
import { pgBossQueue } from "merchant-webhooks/pg-boss";
import { afterAll, describe, expect, it } from "vitest";
import { captureLogger, silentLogger } from "../support/capture-logger.js";
import { notification, post } from "../support/notifications.js";
import { eventually } from "../support/redis.js";
import { pgBossBed } from "./fixtures/bed.js";
import { jobStates } from "./fixtures/boss.js";
import { bedWorker } from "./fixtures/lane.js";

describe("error level only for a notification that failed", () => {
  const bed = pgBossBed("pgblog", () => "");
  const { bossSchema, pool, store } = bed;
  const cleanup: Array<() => Promise<unknown>> = [];
  afterAll(async () => {
    for (const step of cleanup.reverse()) await step();
  });

  it("a worker whose run lost its transaction while another completed the job logs no error", async () => {
    const receiver = createReceiver({
      logger: silentLogger(),
      idempotency: store,
      queue: pgBossQueue({ boss: bed.boss, name: "lost", schema: bossSchema }),
    });
    cleanup.push(() => receiver.close());
    let backend: number | undefined;
    let thaw: () => void = () => {};
    const thawed = new Promise<void>((resolve) => {
      thaw = resolve;
    });
    const { logger, lines } = captureLogger();
    // A worker that stalls mid-handler (as a frozen process would) and loses its connection meanwhile.
    const frozen = bedWorker(bed, "lost", {
      logger,
      onRenew: async (_n, ctx) => {
        backend = (await ctx.transaction.query("SELECT pg_backend_pid() AS pid")).rows[0].pid;
        await thawed;
      },
    });
    cleanup.push(() => frozen.close({ timeoutMs: 1_000 }));
    const body = notification();
    expect((await receiver.handle(post(body))).status).toBe(200);
    await eventually(async () => backend !== undefined, 30_000, "the handler to start");
    // Frozen, it takes no more jobs; its handler, cut off, waits on regardless.
    await frozen.close({ timeoutMs: 0 }).catch(() => {});
    await pool.query("SELECT pg_terminate_backend($1)", [backend]);

    const runs: string[] = [];
    const other = bedWorker(bed, "lost", { onRenew: async (n) => void runs.push(n.id) });
    cleanup.push(() => other.close({ timeoutMs: 1_000 }));
    await eventually(async () => (await store.get(body.id))?.state === "completed", 15_000, "another worker to run it");
    thaw();
    await eventually(
      async () => lines().some((line) => line.notification_id === body.id),
      10_000,
      "the run's log line",
    );
    expect(runs).toEqual([body.id]);
    expect(lines().filter((line) => line.level >= 50)).toEqual([]);
    expect(await jobStates(pool, bossSchema, "lost")).toEqual({ completed: 1 });
  }, 90_000);
});
