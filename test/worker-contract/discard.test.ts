import type { SubscriptionNotification } from "merchant-webhooks";
import { describe, expect, it } from "vitest";
import { notification } from "../support/notifications.js";
import { eventually, sleep } from "../support/redis.js";
import { TRANSPORTS, transportBed } from "./transports.js";

describe.each(TRANSPORTS)("a dead letter discarded, on $name", (transport) => {
  const bed = transportBed(transport, "discard");

  it("is gone from every redrive path: the admin list, the admin redrive and the queue's own redrive", async () => {
    const line = bed.line("discard", { attempts: 1 });
    let down = true;
    const runs: string[] = [];
    bed.worker("discard", {
      onRenew: async (n: SubscriptionNotification) => {
        runs.push(n.id);
        if (down) throw new Error("downstream down");
      },
    });
    const [discarded, kept] = [notification(), notification()];
    for (const body of [discarded, kept]) expect(await line.deliver(body)).toBe(200);
    await eventually(
      async () => (await line.offeredForRedrive()).length === 2,
      30_000,
      "both in the queue's dead letters",
    );
    await eventually(
      async () => (await line.admin.listNotifications({ state: "failed" })).items.length === 2,
      15_000,
      "both in the console's dead letters",
    );

    expect(await line.admin.discard(discarded.id, { reason: "refunded by hand" })).toMatchObject({ discarded: true });
    expect((await line.admin.listNotifications({ state: "failed" })).items.map((item) => item.id)).toEqual([kept.id]);
    expect(await line.offeredForRedrive()).toEqual([kept.id]);

    down = false;
    const result = await line.admin.redrive({ filter: { state: "failed" } });
    expect(result).toMatchObject({ redriven: 1, ids: [kept.id] });
    await eventually(
      async () => (await line.admin.getNotification(kept.id))?.record?.state === "completed",
      30_000,
      "the kept one to complete",
    );
    // Delivered again, the discarded notification is answered as settled and does not run.
    expect(await line.deliver(discarded)).toBe(200);
    await sleep(300);
    expect(runs.filter((id) => id === discarded.id)).toHaveLength(1);
    expect(runs.filter((id) => id === kept.id)).toHaveLength(2);
    expect((await line.admin.getNotification(discarded.id))?.record).toMatchObject({
      state: "completed",
      answer: { message: expect.stringContaining("refunded by hand") },
    });
    expect(await line.offeredForRedrive()).toEqual([]);
  });
});
