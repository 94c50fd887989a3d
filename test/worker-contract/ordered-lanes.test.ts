import type { SubscriptionNotification } from "merchant-webhooks";
import { describe, expect, it } from "vitest";
import { runCliProcess } from "../cli/run-cli.js";
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

  it.each(["the admin API", "the CLI"])(
    "4 dead letters of one subscription redriven in bulk by %s run once each, oldest first, none stale",
    async (by) => {
      const cli = by === "the CLI";
      const name = cli ? "cli-redrive" : "redrive";
      const line = bed.line(name, { ordering: true, attempts: 1 });
      let down = true;
      const runs: string[] = [];
      const succeeded: string[] = [];
      const stale: string[] = [];
      const onRenew = async (n: SubscriptionNotification) => {
        runs.push(n.id);
        if (down) throw new Error("downstream down");
        // A run that takes a while: the newer ones' jobs come while the subscription is held by it.
        await sleep(300);
        succeeded.push(n.id);
      };
      const onStale = async (n: SubscriptionNotification) => void stale.push(n.id);
      bed.worker(name, { onRenew, onStale });
      bed.worker(name, { onRenew, onStale });
      const sub = `SUB-${process.pid}-${transport.kind}-${name}`;
      const sent = laneOf(sub, 4, 9);
      const ids = sent.map((n) => n.id);
      for (const body of sent) await deliverUntilAccepted(line.receiver, body, 20);
      // Dead letters on both sides: the records failed, and the queue's failed jobs (the record's failure
      // commits a moment before BullMQ moves its job to the failed set).
      await eventually(
        async () => (await line.deadLetters(sub)).length === 4 && (await line.offeredForRedrive()).length >= 4,
        30_000,
        "the 4 dead letters",
      );
      expect(runs).toEqual(ids);

      down = false;
      let redrivenAt = Date.now();
      if (cli) {
        // The binary, as a person runs it once the cause is fixed: the queue's whole failed set, oldest first.
        const run = await runCliProcess(["redrive", ...line.redriveArgs]);
        redrivenAt = Date.now(); // from its exit: a Node process's start-up is no part of the drain
        expect(run.stderr).toBe("");
        expect(run.code).toBe(0);
        const from = transport.kind === "pgboss-postgres" ? "pg-boss queue" : "queue";
        expect(run.stdout).toBe(`${ids.map((id) => `redriven: ${id}\n`).join("")}4 redriven from ${from} ${name}\n`);
      } else {
        const result = await line.admin.redrive({ filter: { subscriptionId: sub } });
        expect(result).toMatchObject({ matched: 4, redriven: 4, skipped: [] });
      }
      await eventually(() => line.completed(ids), 30_000, "the redriven notifications to complete");
      // The newer three wait for the oldest to run, not for a lease (30 s) to run out.
      const drainMs = Date.now() - redrivenAt;
      console.log(`ordered bulk redrive by ${by} on ${transport.name}: 4 completed ${drainMs} ms after the redrive`);
      expect(drainMs).toBeLessThan(10_000);

      expect(succeeded).toEqual(ids);
      expect(stale).toEqual([]);
      for (const id of ids)
        expect((await line.admin.getNotification(id))?.record).toMatchObject({
          state: "completed",
          answer: { message: "processed" },
        });
      expect(await line.deadLetters(sub)).toEqual([]);
    },
  );
});
