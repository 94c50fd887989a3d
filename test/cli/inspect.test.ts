import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { createReceiver, jsonlRecorder } from "merchant-webhooks";
import { bullmqQueue, createWorker } from "merchant-webhooks/bullmq";
import { redisStore } from "merchant-webhooks/redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { json, notification } from "../support/notifications.js";
import { eventually, REDIS_URL, removeKeys, uniquePrefix } from "../support/redis.js";
import { runCli } from "./run-cli.js";

describe("merchant-webhooks inspect", () => {
  const prefix = uniquePrefix("cli-inspect");
  const storePrefix = `${prefix}idem:`;
  const redis = new Redis(REDIS_URL);
  const dir = mkdtempSync(join(tmpdir(), "mw-inspect-"));
  const store = redisStore({ connection: REDIS_URL, prefix: storePrefix });
  const queue = bullmqQueue({ connection: REDIS_URL, name: "inspected", prefix, jobOptions: { attempts: 1 } });
  const recorder = jsonlRecorder({ dir });
  const receiver = createReceiver({
    logger: silentLogger(),
    idempotency: store,
    queue,
    record: recorder,
    ordering: true,
  });
  const worker = createWorker({
    connection: REDIS_URL,
    name: "inspected",
    prefix,
    idempotency: store,
    logger: silentLogger(),
    onRenew: async () => {
      throw new Error("downstream refused");
    },
  });
  const sent = notification();
  sent.resource.renewal_event.payment_detail.card_info.cvc = "cvc-inspect-8080";

  beforeAll(async () => {
    const answer = await receiver.handle({
      method: "POST",
      headers: { "content-type": "application/json" },
      rawBody: json(sent),
    });
    expect(answer.status).toBe(200);
    await eventually(async () => (await queue.queue.getFailedCount()) === 1, 20_000, "the job to fail");
    await recorder.close();
  });
  afterAll(async () => {
    await worker.close({ timeoutMs: 5_000 });
    await receiver.close();
    await store.close();
    await removeKeys(redis, prefix);
    redis.disconnect();
    rmSync(dir, { recursive: true, force: true });
  });

  it("prints the record, the ordering key, the job and the recording, redacted", async () => {
    const run = await runCli([
      "inspect",
      sent.id,
      "--redis",
      REDIS_URL,
      "--store-prefix",
      storePrefix,
      "--queue",
      "inspected",
      "--prefix",
      prefix,
      "--recordings",
      dir,
    ]);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const detail = JSON.parse(run.stdout);
    expect(detail).toMatchObject({
      id: sent.id,
      record: { state: "failed" },
      eventType: "SUBSCRIPTION_RENEW",
      subscriptionId: sent.resource.id,
      ordering: { key: `${sent.resource.merchant_id}:${sent.resource.id}` },
      job: { state: "failed", sealed: false },
      recording: { answer: { status: 200, processed: true } },
    });
    expect(run.stdout).not.toContain("cvc-inspect-8080");
  });

  it("exits 1 for an id nothing is known of", async () => {
    const run = await runCli(["inspect", "WH-nobody", "--redis", REDIS_URL, "--store-prefix", storePrefix]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("nothing is known of WH-nobody");
  });
});
