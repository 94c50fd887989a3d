import { createReceiver, type HandlerContext, type SubscriptionNotification } from "merchant-webhooks";
import { createPaymentClient } from "merchant-webhooks/client";
import { pgBossQueue } from "merchant-webhooks/pg-boss";
import { afterAll, describe, expect, it } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { json, notification } from "../support/notifications.js";
import { eventually } from "../support/redis.js";
import { pgBossBed } from "./fixtures/bed.js";
import { bedWorker } from "./fixtures/lane.js";

describe("ctx.platform in a pg-boss worker's handlers", () => {
  const bed = pgBossBed("pgbplat", () => "");
  const cleanup: Array<() => Promise<unknown>> = [];
  afterAll(async () => {
    for (const step of cleanup.reverse()) await step();
  });

  it("is the client the worker was given, and undefined without one", async () => {
    // A client nothing answers: the handlers here only look at which one they were given.
    const platform = createPaymentClient({ baseUrl: "http://127.0.0.1:9" });
    const seen = new Map<string, unknown>();
    const onRenew = async (n: SubscriptionNotification, ctx: HandlerContext) => void seen.set(n.id, ctx.platform);
    const post = (body: unknown) => ({
      method: "POST",
      headers: { "content-type": "application/json" },
      rawBody: json(body),
    });
    const run = async (name: string, withPlatform: boolean) => {
      // Retries a second apart, as the other pg-boss tests have them: with the default back-off
      // (2 s, doubling), one attempt lost to a loaded machine would outlast the wait below.
      const queue = pgBossQueue({
        boss: bed.boss,
        name,
        schema: bed.bossSchema,
        jobOptions: { retryLimit: 3, retryDelay: 1, retryBackoff: false },
      });
      const receiver = createReceiver({ logger: silentLogger(), idempotency: bed.store, queue });
      const worker = bedWorker(bed, name, { onRenew, ...(withPlatform ? { platform } : {}) });
      cleanup.push(
        () => worker.close({ timeoutMs: 1_000 }),
        () => receiver.close(),
      );
      const body = notification();
      expect((await receiver.handle(post(body))).status).toBe(200);
      await eventually(async () => seen.has(body.id), 15_000, "the handler to run");
      return seen.get(body.id);
    };
    expect(await run("with-platform", true)).toBe(platform);
    expect(await run("without-platform", false)).toBeUndefined();
  });
});
