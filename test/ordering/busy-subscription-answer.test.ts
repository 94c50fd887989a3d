import { Redis } from "ioredis";
import {
  createReceiver,
  type IdempotencyStore,
  memoryStore,
  type NotificationQueue,
  type SubscriptionNotification,
} from "merchant-webhooks";
import { pgBossQueue } from "merchant-webhooks/pg-boss";
import { postgresStore } from "merchant-webhooks/postgres";
import { redisStore } from "merchant-webhooks/redis";
import { afterAll, describe, expect, it } from "vitest";
import { pgBossBed } from "../pg-boss/fixtures/bed.js";
import { bedWorkerStarter, laneOf } from "../pg-boss/fixtures/lane.js";
import { silentLogger } from "../support/capture-logger.js";
import { json } from "../support/notifications.js";
import { eventually, REDIS_URL, removeKeys, uniquePrefix } from "../support/redis.js";
import { bullmqInProcess } from "./fixtures/mailbox.js";

/**
 * docs/ordering.md: through a durable queue, the receiver never answers 409 because the subscription
 * is busy; it accepts the notification into the subscription's lane. The same on every store.
 */
describe("a new notification of a subscription whose handler is running, through a queue", () => {
  const prefix = uniquePrefix("lanes-busy");
  const redis = new Redis(REDIS_URL);
  const bed = pgBossBed("lanes_busy", () => "");
  const cleanup: Array<() => Promise<unknown>> = [];
  afterAll(async () => {
    for (const step of cleanup.reverse()) await step();
    await removeKeys(redis, prefix);
    redis.disconnect();
  });

  /** A handler that holds the first notification until `release`, recording what ran. */
  function gatedHandler() {
    const ran: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const onRenew = async (n: SubscriptionNotification) => {
      ran.push(n.id);
      if (ran.length === 1) await gate;
    };
    return { ran, onRenew, release };
  }

  const deliver = (receiver: ReturnType<typeof createReceiver>, n: unknown) =>
    receiver.handle({ method: "POST", headers: { "content-type": "application/json" }, rawBody: json(n) });

  /** Deliver the first, wait for its handler to hold the subscription, then deliver the rest once each. */
  async function busyLane(
    label: string,
    store: IdempotencyStore,
    queue: NotificationQueue,
    startWorker: (onRenew: (n: SubscriptionNotification) => Promise<void>) => void,
  ) {
    const { ran, onRenew, release } = gatedHandler();
    const receiver = createReceiver({ logger: silentLogger(), idempotency: store, queue, ordering: true });
    cleanup.push(() => receiver.close());
    startWorker(onRenew);
    const sent = laneOf(`SUB-${process.pid}-${label}`, 3, 7);
    expect((await deliver(receiver, sent[0])).status).toBe(200);
    await eventually(() => ran.length === 1, 20_000, "the first handler to start");
    const answers = [];
    for (const n of sent.slice(1)) answers.push(await deliver(receiver, n));
    release();
    expect(answers.map((answer) => answer.status)).toEqual([200, 200]);
    await eventually(() => ran.length === sent.length, 30_000, "every notification to run");
    return { answers, ran, sent };
  }

  const expectAccepted = ({ answers, ran, sent }: Awaited<ReturnType<typeof busyLane>>) => {
    for (const answer of answers) {
      expect(answer.status).toBe(200);
      expect(JSON.parse(answer.body as string)).toMatchObject({ processed: true });
    }
    expect(ran).toEqual(sent.map((n) => n.id));
  };

  it("postgresStore with pg-boss: accepted (200), run after the busy one, in order", async () => {
    const queue = pgBossQueue({ boss: bed.boss, name: "busy", schema: bed.bossSchema });
    expectAccepted(await busyLane("pgboss", bed.store, queue, bedWorkerStarter(bed, "busy", cleanup)));
  }, 60_000);

  /** A BullMQ queue and a worker in this process on `store`. */
  const bullmqLane = (label: string, store: IdempotencyStore) => {
    const { queue, startWorker } = bullmqInProcess(label, prefix, store, cleanup);
    return busyLane(label, store, queue, startWorker);
  };

  it("postgresStore with BullMQ: accepted (200), run after the busy one, in order", async () => {
    const store = postgresStore({ connection: bed.pool, schema: bed.schema });
    expectAccepted(await bullmqLane("pgbullmq", store));
  }, 60_000);

  it("redisStore with BullMQ: the same", async () => {
    const store = redisStore({ connection: REDIS_URL, prefix: `${prefix}store:` });
    cleanup.push(() => store.close());
    expectAccepted(await bullmqLane("redis", store));
  }, 60_000);

  it("memoryStore with BullMQ: the same", async () => {
    expectAccepted(await bullmqLane("memory", memoryStore()));
  }, 60_000);
});
