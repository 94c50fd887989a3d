import { createReceiver, type NotificationQueue } from "merchant-webhooks";
import { pgBossJobIdFor, pgBossQueue } from "merchant-webhooks/pg-boss";
import { afterAll, describe, expect, it } from "vitest";
import { post } from "../ordering/fixtures/mailbox.js";
import { silentLogger } from "../support/capture-logger.js";
import { notification } from "../support/notifications.js";
import { pgBossBed } from "./fixtures/bed.js";

/**
 * As test/bullmq/takeover.test.ts, through pg-boss, whose job is added in the claim's transaction: a
 * redelivery that finds its record queued with no job takes it over; if the job's add is then refused,
 * the sender's next retry is accepted at once, not 409 for a whole lease.
 */
describe("a take-over of a queued record whose job add is refused, on pg-boss", () => {
  const bed = pgBossBed("pgbtakeover", () => "");
  const LEASE_MS = 1_000;
  const closers: Array<() => Promise<unknown>> = [];
  afterAll(async () => {
    for (const close of closers) await close();
  });

  it("releases the claim: the sender's next retry is accepted at once, its job there", async () => {
    const name = "takeover";
    const queue = pgBossQueue({ boss: bed.boss, name, schema: bed.bossSchema });
    // The same queue, whose adds are refused (PostgreSQL failing over, say).
    const refusing: NotificationQueue = Object.assign(Object.create(queue), {
      enqueue: async () => {
        throw new Error("refused for the test");
      },
      enqueueInTransaction: async () => {
        throw new Error("refused for the test");
      },
    });
    const options = { logger: silentLogger(), idempotency: bed.store, leaseMs: LEASE_MS } as const;
    const receiver = createReceiver({ ...options, queue });
    const refused = createReceiver({ ...options, queue: refusing });
    closers.push(
      () => receiver.close(),
      () => refused.close(),
    );
    const body = notification();
    expect((await receiver.handle(post(body))).status).toBe(200);
    // The job is lost (deleted by hand); once the hand-off lease lapses, a redelivery takes the record over.
    const jobId = pgBossJobIdFor(name, body.id);
    await bed.pool.query(`DELETE FROM "${bed.bossSchema}".job WHERE id = $1`, [jobId]);
    expect(await bed.boss.getJobById(name, jobId)).toBeNull();
    await new Promise((resolve) => setTimeout(resolve, LEASE_MS + 100));
    expect((await bed.store.get(body.id))?.state).toBe("queued");

    expect((await refused.handle(post(body))).status).toBe(503);
    const retry = await receiver.handle(post(body));
    expect(retry.status).toBe(200);
    expect(retry.answer.message).toBe("accepted for processing");
    expect((await bed.boss.getJobById(name, jobId))?.state).toBe("created");
  });
});
