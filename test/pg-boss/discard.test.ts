import { createReceiver } from "merchant-webhooks";
import { discardDeadLetters, pgBossQueue, pgBossRedrive as redrive } from "merchant-webhooks/pg-boss";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../cli/run-cli.js";
import { silentLogger } from "../support/capture-logger.js";
import { notification, post } from "../support/notifications.js";
import { DATABASE_URL } from "../support/postgres.js";
import { eventually } from "../support/redis.js";
import { pgBossBed } from "./fixtures/bed.js";
import { jobStates } from "./fixtures/boss.js";
import { bedWorker } from "./fixtures/lane.js";

describe("discarding a pg-boss dead letter", () => {
  const bed = pgBossBed("pgbdisc", () => "");
  const { bossSchema, pool, store } = bed;
  const cleanup: Array<() => Promise<unknown>> = [];
  afterAll(async () => {
    for (const step of cleanup.reverse()) await step();
  });

  it("removes its dead letter (an archived one too): neither redrive nor the CLI offers it again", async () => {
    const queue = pgBossQueue({ boss: bed.boss, name: "disc", schema: bossSchema, jobOptions: { retryLimit: 0 } });
    const receiver = createReceiver({ logger: silentLogger(), idempotency: store, queue });
    const runs: string[] = [];
    const worker = bedWorker(bed, "disc", {
      onRenew: async (n) => {
        runs.push(n.id);
        throw new Error("downstream down");
      },
    });
    cleanup.push(
      () => worker.close({ timeoutMs: 1_000 }),
      () => receiver.close(),
    );
    const [kept, discarded, archived] = [notification(), notification(), notification()];
    for (const body of [kept, discarded, archived]) expect((await receiver.handle(post(body))).status).toBe(200);
    await eventually(
      async () => (await jobStates(pool, bossSchema, "disc_dead_letter")).created === 3,
      15_000,
      "three dead letters",
    );
    // One of them archived by pg-boss's retention while it waits for a decision.
    await pool.query(
      `UPDATE "${bossSchema}".job SET keep_until = now() - interval '1 second' WHERE name = 'disc_dead_letter' AND data->>'id' = $1`,
      [archived.id],
    );
    await bed.boss.maintain();

    expect(
      await discardDeadLetters({
        boss: bed.boss,
        name: "disc",
        schema: bossSchema,
        ids: [discarded.id, archived.id, "WH-never"],
      }),
    ).toEqual({ discarded: [discarded.id, archived.id], notFound: ["WH-never"] });
    expect(await jobStates(pool, bossSchema, "disc_dead_letter")).toEqual({ created: 1 });

    const dry = await runCli([
      "redrive",
      "--pg-boss",
      DATABASE_URL,
      "--schema",
      bossSchema,
      "--queue",
      "disc",
      "--dry-run",
    ]);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain(`would redrive: ${kept.id}\n`);
    expect(dry.stdout).not.toContain(discarded.id);
    expect(dry.stdout).not.toContain(archived.id);
    expect(await redrive({ boss: bed.boss, name: "disc", schema: bossSchema, dryRun: true })).toEqual({
      redriven: [kept.id],
      notFailed: [],
    });
    // The real redrive (which first puts back archived dead letters) does not bring the discarded ones back.
    expect((await redrive({ boss: bed.boss, name: "disc", schema: bossSchema })).redriven).toEqual([kept.id]);
    await eventually(async () => runs.filter((id) => id === kept.id).length === 2, 15_000, "the redriven run");
    expect(runs.filter((id) => id !== kept.id).sort()).toEqual([discarded.id, archived.id].sort());
  });
});
