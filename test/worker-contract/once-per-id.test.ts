import type { HandlerContext, SubscriptionNotification } from "merchant-webhooks";
import { describe, expect, it } from "vitest";
import { notification } from "../support/notifications.js";
import { eventually, sleep } from "../support/redis.js";
import { TRANSPORTS, transportBed } from "./transports.js";

const COPIES = 8;

describe.each(TRANSPORTS)("once per id, on $name", (transport) => {
  const bed = transportBed(transport, "once");

  it(`runs a notification delivered ${COPIES} times at once, and again after completion, exactly once`, async () => {
    const line = bed.line("once");
    const runs = new Map<string, number[]>();
    const onRenew = async (n: SubscriptionNotification, ctx: HandlerContext) => {
      runs.set(n.id, [...(runs.get(n.id) ?? []), ctx.attempt]);
      await sleep(50);
    };
    // Two workers, as two processes would take jobs off one queue.
    bed.worker("once", { onRenew });
    bed.worker("once", { onRenew });
    const sent = Array.from({ length: 10 }, () => notification());

    const answers = await Promise.all(sent.flatMap((body) => Array.from({ length: COPIES }, () => line.deliver(body))));
    // Each copy is accepted, answered as already queued or processed, or told to come back (409): none fails.
    expect(answers.filter((status) => status !== 200 && status !== 409)).toEqual([]);
    expect(answers.filter((status) => status === 200).length).toBeGreaterThanOrEqual(sent.length);
    const completed = async () =>
      (await Promise.all(sent.map((body) => bed.store.get(body.id)))).every((record) => record?.state === "completed");
    await eventually(completed, 20_000, "every notification to complete");

    const again = await Promise.all(sent.flatMap((body) => [line.deliver(body), line.deliver(body)]));
    expect(again).toEqual(again.map(() => 200));
    // Time for a wrongly queued second run to show.
    await sleep(500);
    expect(sent.map((body) => runs.get(body.id)?.length)).toEqual(sent.map(() => 1));
    for (const body of sent) expect(await bed.store.get(body.id)).toMatchObject({ state: "completed" });
  });
});
