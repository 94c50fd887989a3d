import type { HandlerContext, SubscriptionNotification } from "merchant-webhooks";
import { describe, expect, it } from "vitest";
import { notification } from "../support/notifications.js";
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

/** Each of `ids` ran twice, attempts 1 and 2, and is completed with 2 attempts on the console's page; none dead. */
async function expectCompletedOnSecondAttempt(
  line: Line,
  attempts: ReadonlyMap<string, number[]>,
  ids: readonly string[],
) {
  for (const id of ids) {
    expect(attempts.get(id)).toEqual([1, 2]);
    expect((await line.admin.getNotification(id))?.record).toMatchObject({ state: "completed", attempts: 2 });
  }
  expect(await line.deadLetters()).toEqual([]);
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
});
