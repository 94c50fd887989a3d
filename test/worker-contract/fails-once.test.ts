import type { HandlerContext, SubscriptionNotification } from "merchant-webhooks";
import { describe, expect, it } from "vitest";
import { laneOf } from "../pg-boss/fixtures/lane.js";
import { deliverUntilAccepted, notification } from "../support/notifications.js";
import { eventually } from "../support/redis.js";
import { type Line, TRANSPORTS, transportBed } from "./transports.js";

/** A handler that fails the first run of each id and succeeds the second, noting each run's ctx.attempt. */
function failingOncePerId() {
  const attempts = new Map<string, number[]>();
  const succeeded: string[] = [];
  const onRenew = async (n: SubscriptionNotification, ctx: HandlerContext) => {
    attempts.set(n.id, [...(attempts.get(n.id) ?? []), ctx.attempt]);
    if (attempts.get(n.id)!.length === 1) throw new Error("the bank is down for a moment");
    succeeded.push(n.id);
  };
  return { attempts, succeeded, onRenew };
}

/** Each of `ids` ran twice, attempts 1 and 2 on the handler's context, and is completed; none dead. */
async function expectRanTwiceAndCompleted(
  line: Line,
  attempts: ReadonlyMap<string, number[]>,
  ids: readonly string[],
): Promise<Map<string, { attempts?: number } | undefined>> {
  const records = new Map<string, { attempts?: number } | undefined>();
  for (const id of ids) {
    expect(attempts.get(id)).toEqual([1, 2]);
    const record = (await line.admin.getNotification(id))?.record;
    expect(record).toMatchObject({ state: "completed" });
    records.set(id, record);
  }
  expect(await line.deadLetters()).toEqual([]);
  return records;
}

/** As `expectRanTwiceAndCompleted`, and the console's page counts the same 2 attempts. */
async function expectCompletedOnSecondAttempt(
  line: Line,
  attempts: ReadonlyMap<string, number[]>,
  ids: readonly string[],
) {
  const records = await expectRanTwiceAndCompleted(line, attempts, ids);
  for (const id of ids) expect(records.get(id)).toMatchObject({ attempts: 2 });
}

describe.each(TRANSPORTS)("a handler that fails once per id, then succeeds, on $name", (transport) => {
  const bed = transportBed(transport, "failonce");

  it("every notification completes without a redrive, on its second attempt everywhere", async () => {
    const line = bed.line("plain");
    const handler = failingOncePerId();
    bed.worker("plain", { onRenew: handler.onRenew });
    const sent = Array.from({ length: 5 }, () => notification());
    for (const body of sent) expect(await line.deliver(body)).toBe(200);
    await eventually(() => line.completed(sent.map((n) => n.id)), 30_000, "every notification to complete");

    await expectCompletedOnSecondAttempt(
      line,
      handler.attempts,
      sent.map((n) => n.id),
    );
  });

  it("with ordering, the notifications of one subscription complete in position order, across two workers", {
    timeout: 90_000,
  }, async () => {
    const line = bed.line("ordered", { ordering: true });
    const handler = failingOncePerId();
    bed.worker("ordered", { onRenew: handler.onRenew });
    bed.worker("ordered", { onRenew: handler.onRenew });
    const sent = laneOf(`SUB-${process.pid}-${transport.kind}-once`, 5, 4);
    // Accepted while a run holds the subscription; a 409 is sent again, as the platform does.
    for (const body of sent) await deliverUntilAccepted(line.receiver, body, 50);
    await eventually(() => line.completed(sent.map((n) => n.id)), 60_000, "the subscription to drain");

    expect(handler.succeeded).toEqual(sent.map((n) => n.id));
    await expectCompletedOnSecondAttempt(
      line,
      handler.attempts,
      sent.map((n) => n.id),
    );
  });
});
