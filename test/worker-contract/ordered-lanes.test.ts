import type { SubscriptionNotification } from "merchant-webhooks";
import { describe, expect, it } from "vitest";
import { laneOf } from "../pg-boss/fixtures/lane.js";
import { deliverUntilAccepted } from "../support/notifications.js";
import { eventually, sleep } from "../support/redis.js";
import { TRANSPORTS, transportBed } from "./transports.js";

describe.each(TRANSPORTS)("ordered lanes, on $name", (transport) => {
  const bed = transportBed(transport, "lanes");

  it("the notifications of one subscription run in position order, one at a time, across two workers", async () => {
    const line = bed.line("order", { ordering: true });
    const ran: string[] = [];
    let running = 0;
    let mostAtOnce = 0;
    const onRenew = async (n: SubscriptionNotification) => {
      mostAtOnce = Math.max(mostAtOnce, ++running);
      await sleep(20);
      ran.push(n.id);
      running--;
    };
    const onStale = async (n: SubscriptionNotification) => void ran.push(`stale:${n.id}`);
    bed.worker("order", { onRenew, onStale });
    bed.worker("order", { onRenew, onStale });
    const sent = laneOf(`SUB-${process.pid}-${transport.kind}-order`, 6, 8);
    for (const body of sent) await deliverUntilAccepted(line.receiver, body, 20);
    await eventually(() => line.completed(sent.map((n) => n.id)), 30_000, "the subscription to drain");

    expect(ran).toEqual(sent.map((n) => n.id));
    expect(mostAtOnce).toBe(1);
  });
});
