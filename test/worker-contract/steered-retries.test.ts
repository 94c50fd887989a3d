import {
  type HandlerContext,
  NonRetriableError,
  RetryAfterError,
  type SubscriptionNotification,
} from "merchant-webhooks";
import { describe, expect, it } from "vitest";
import { notification } from "../support/notifications.js";
import { eventually, sleep } from "../support/redis.js";
import { TRANSPORTS, transportBed } from "./transports.js";

describe.each(TRANSPORTS)("a handler steering its retries, on $name", (transport) => {
  const bed = transportBed(transport, "steer");

  it("NonRetriableError: one run, straight to the dead letters with attempts left", async () => {
    const line = bed.line("refused", { attempts: 3 });
    const attempts: number[] = [];
    bed.worker("refused", {
      onRenew: async (_n: SubscriptionNotification, ctx: HandlerContext) => {
        attempts.push(ctx.attempt);
        throw new NonRetriableError("the subscription was deleted");
      },
    });
    const body = notification();
    expect(await line.deliver(body)).toBe(200);
    await eventually(async () => (await line.offeredForRedrive()).includes(body.id), 30_000, "the queue's dead letter");
    expect(await line.deadLetters()).toContain(body.id);
    // Time for a retry the queue should not make.
    await sleep(1_500);
    expect(attempts).toEqual([1]);
    expect((await line.admin.getNotification(body.id))?.record).toMatchObject({ state: "failed", attempts: 1 });
  });

  it("RetryAfterError: run again after its delay, not the queue's, then completed", async () => {
    // The queue's own retry would wait a minute, longer than this test waits: the second run comes
    // from the handler's delay or not at all.
    const line = bed.line("later", { attempts: 3, retryDelayMs: 60_000 });
    const attempts: number[] = [];
    bed.worker("later", {
      onRenew: async (_n: SubscriptionNotification, ctx: HandlerContext) => {
        attempts.push(ctx.attempt);
        if (attempts.length === 1) throw new RetryAfterError("rate limited", 300);
      },
    });
    const body = notification();
    expect(await line.deliver(body)).toBe(200);
    await eventually(
      async () => (await line.admin.getNotification(body.id))?.record?.state === "completed",
      30_000,
      "the second run to complete it",
    );
    expect(attempts).toEqual([1, 2]);
    expect((await line.admin.getNotification(body.id))?.record).toMatchObject({ state: "completed", attempts: 2 });
    expect(await line.deadLetters()).not.toContain(body.id);
  });
});
