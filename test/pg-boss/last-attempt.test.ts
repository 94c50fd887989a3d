import { createReceiver, type SubscriptionNotification } from "merchant-webhooks";
import { pgBossQueue } from "merchant-webhooks/pg-boss";
import { afterAll, describe, expect, it } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { notification, post } from "../support/notifications.js";
import { eventually } from "../support/redis.js";
import { pgBossBed } from "./fixtures/bed.js";
import { jobStates } from "./fixtures/boss.js";
import { bedWorker } from "./fixtures/lane.js";

/**
 * A handler that always fails, `retryLimit` 2 and no delay between runs, three workers on the queue
 * looking for jobs as often as they can: between a failed run's rollback and its job being failed, the
 * job must not look ready to another worker.
 */
describe("a failed run on pg-boss, seen by the other workers of its queue", () => {
  const bed = pgBossBed("pgblast", () => "");
  const { bossSchema, pool, store } = bed;
  const cleanup: Array<() => Promise<unknown>> = [];
  afterAll(async () => {
    for (const step of cleanup.reverse()) await step();
  });

  it("runs a handler that always fails exactly 1 + retryLimit times, then dead-letters it", async () => {
    const name = "last-attempt";
    const queue = pgBossQueue({
      boss: bed.boss,
      name,
      schema: bossSchema,
      jobOptions: { retryLimit: 2, retryDelay: 0, retryBackoff: false },
    });
    const receiver = createReceiver({ logger: silentLogger(), idempotency: store, queue });
    const runs = new Map<string, number[]>();
    const onRenew = async (n: SubscriptionNotification, ctx: { attempt: number }) => {
      runs.set(n.id, [...(runs.get(n.id) ?? []), ctx.attempt]);
      throw new Error("downstream refused");
    };
    for (let i = 0; i < 3; i++) {
      const worker = bedWorker(bed, name, { onRenew, pollingIntervalMs: 5 });
      cleanup.push(() => worker.close({ timeoutMs: 1_000 }));
    }
    cleanup.push(() => receiver.close());

    const sent = Array.from({ length: 30 }, () => notification());
    for (const body of sent) expect((await receiver.handle(post(body))).status).toBe(200);
    const deadLetters = async () => Object.values(await jobStates(pool, bossSchema, `${name}_dead_letter`));
    await eventually(
      async () => (await deadLetters()).reduce((a, b) => a + b, 0) === sent.length,
      30_000,
      "every notification in the dead letters",
    );
    // A run that started late would still be counted by now: give it the time a run takes here.
    await new Promise((resolve) => setTimeout(resolve, 300));
    for (const body of sent) {
      expect(runs.get(body.id), body.id).toEqual([1, 2, 3]);
      expect(await store.get(body.id), body.id).toMatchObject({ state: "failed", attempts: 3 });
    }
  });
});
