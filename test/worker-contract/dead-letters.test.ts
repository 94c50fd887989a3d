import type { HandlerContext, SubscriptionNotification } from "merchant-webhooks";
import { describe, expect, it } from "vitest";
import { notification } from "../support/notifications.js";
import { eventually } from "../support/redis.js";
import { TRANSPORTS, transportBed } from "./transports.js";

const ATTEMPTS = 2;

describe.each(TRANSPORTS)("a handler that always fails, on $name", (transport) => {
  const bed = transportBed(transport, "dead");

  it(`each notification is a dead letter after its ${ATTEMPTS} attempts, then redriven once by the admin API and completed once`, async () => {
    const line = bed.line("dead", { attempts: ATTEMPTS });
    let down = true;
    const attempts = new Map<string, number[]>();
    bed.worker("dead", {
      onRenew: async (n: SubscriptionNotification, ctx: HandlerContext) => {
        attempts.set(n.id, [...(attempts.get(n.id) ?? []), ctx.attempt]);
        if (down) throw new Error("downstream down");
      },
    });
    const sent = Array.from({ length: 3 }, () => notification());
    const ids = sent.map((n) => n.id).sort();
    for (const body of sent) expect(await line.deliver(body)).toBe(200);

    await eventually(async () => (await line.deadLetters()).length === ids.length, 30_000, "the dead letters");
    // Every redrive path finds them: the console's list, and the queue's own redrive (the CLI's).
    await eventually(
      async () => (await line.offeredForRedrive()).length === ids.length,
      15_000,
      "the queue's dead letters",
    );
    expect((await line.deadLetters()).sort()).toEqual(ids);
    expect((await line.offeredForRedrive()).sort()).toEqual(ids);
    for (const id of ids) {
      expect(attempts.get(id)).toHaveLength(ATTEMPTS);
      const detail = await line.admin.getNotification(id);
      expect(detail?.record).toMatchObject({ state: "failed" });
      expect(detail?.job).toMatchObject({ state: "failed" });
    }

    down = false;
    const result = await line.admin.redrive({ ids });
    expect(result).toMatchObject({ matched: ids.length, redriven: ids.length, skipped: [] });
    await eventually(() => line.completed(ids), 30_000, "the redriven notifications to complete");
    for (const id of ids) expect(attempts.get(id)).toHaveLength(ATTEMPTS + 1);
    expect(await line.deadLetters()).toEqual([]);
    expect(await line.offeredForRedrive()).toEqual([]);
    // Redriven again, a completed notification runs no more.
    expect((await line.admin.redrive({ ids })).redriven).toBe(0);
    for (const id of ids) expect(attempts.get(id)).toHaveLength(3);
  });
});
