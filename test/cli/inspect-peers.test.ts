import { createReceiver } from "merchant-webhooks";
import { createPgBossWorker, pgBossQueue } from "merchant-webhooks/pg-boss";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pgBossBed } from "../pg-boss/fixtures/bed.js";
import { silentLogger } from "../support/capture-logger.js";
import { json, notification } from "../support/notifications.js";
import { DATABASE_URL } from "../support/postgres.js";
import { eventually } from "../support/redis.js";
import { runCliProcess, without } from "./run-cli.js";

describe("merchant-webhooks inspect and redrive load only the peer they need", () => {
  const bed = pgBossBed("cliinspect", () => "");
  const sent = notification("SUBSCRIPTION_CANCELLED");
  sent.resource.id = "SUB-INSPECT";
  let stop = async () => {};

  beforeAll(async () => {
    const queue = pgBossQueue({
      boss: bed.boss,
      name: "inspected",
      schema: bed.bossSchema,
      jobOptions: { retryLimit: 0 },
    });
    const receiver = createReceiver({ logger: silentLogger(), idempotency: bed.store, queue, ordering: true });
    const worker = createPgBossWorker({
      boss: bed.boss,
      name: "inspected",
      schema: bed.bossSchema,
      idempotency: bed.store,
      logger: silentLogger(),
      pollingIntervalMs: 100,
      onCancel: async () => {
        throw new Error("downstream refused");
      },
    });
    stop = async () => {
      await worker.close({ timeoutMs: 2_000 });
      await receiver.close();
    };
    const answer = await receiver.handle({
      method: "POST",
      headers: { "content-type": "application/json" },
      rawBody: json(sent),
    });
    expect(answer.status).toBe(200);
    await eventually(async () => (await bed.store.get(sent.id))?.state === "failed", 20_000, "the dead letter");
  }, 30_000);
  afterAll(async () => {
    await stop();
  });

  it("prints each command's help with no peer installed", async () => {
    const none = without("ioredis", "bullmq", "pg", "pg-boss");
    const [inspect, redrive] = await Promise.all([
      runCliProcess(["inspect", "--help"], none),
      runCliProcess(["redrive", "--help"], none),
    ]);
    expect(inspect.stderr).toBe("");
    expect(inspect.code).toBe(0);
    expect(inspect.stdout).toContain("Usage: merchant-webhooks inspect <id>");
    expect(redrive.code).toBe(0);
    expect(redrive.stdout).toContain("Usage: merchant-webhooks redrive --queue <name>");
  }, 60_000);

  it("inspects a pg-boss dead letter on PostgreSQL without ioredis or bullmq", async () => {
    const run = await runCliProcess(
      [
        "inspect",
        sent.id,
        "--postgres",
        DATABASE_URL,
        "--schema",
        bed.schema,
        "--pg-boss",
        DATABASE_URL,
        "--boss-schema",
        bed.bossSchema,
        "--queue",
        "inspected",
      ],
      without("ioredis", "bullmq"),
    );
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({
      id: sent.id,
      record: { state: "failed" },
      eventType: "SUBSCRIPTION_CANCELLED",
      subscriptionId: "SUB-INSPECT",
      job: { state: "failed", sealed: false, eventType: "SUBSCRIPTION_CANCELLED" },
    });
  }, 60_000);

  it("redrives (dry run) a pg-boss queue on PostgreSQL without ioredis or bullmq", async () => {
    const run = await runCliProcess(
      ["redrive", "--pg-boss", DATABASE_URL, "--schema", bed.bossSchema, "--queue", "inspected", "--dry-run"],
      without("ioredis", "bullmq"),
    );
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(`would redrive: ${sent.id}\n1 would be redriven from pg-boss queue inspected\n`);
  }, 60_000);

  it("names the package a Redis store needs when it is missing", async () => {
    const run = await runCliProcess(["inspect", sent.id], without("ioredis"));
    expect(run.code).toBe(1);
    expect(run.stderr).toBe("inspect needs the ioredis package, which is not installed: npm install ioredis\n");
  }, 60_000);
});
