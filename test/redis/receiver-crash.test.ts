import { Redis } from "ioredis";
import { redisStore } from "merchant-webhooks/redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { notification } from "../support/notifications.js";
import { eventually, REDIS_URL, removeKeys, sleep, uniquePrefix } from "../support/redis.js";
import { type Delivery, deliver, deliverPast503 } from "./fixtures/deliver.js";
import { type ReceiverProcess, spawnReceiver } from "./fixtures/spawn-receiver.js";

/** A short lease, so a dead process's claim runs out within the test; the heartbeat renews it every third. */
const LEASE_MS = 1_500;

describe("a receiver process killed in the middle of a handler", () => {
  const redis = new Redis(REDIS_URL);
  const prefix = uniquePrefix("crash");
  const storePrefix = `${prefix}idem:`;
  const effects = `${prefix}effects:`;
  const store = redisStore({ connection: REDIS_URL, prefix: storePrefix });
  const hung = notification();
  let doomed: ReceiverProcess;
  let survivor: ReceiverProcess;

  beforeAll(async () => {
    const env = {
      STORE_URL: REDIS_URL,
      STORE_PREFIX: storePrefix,
      EFFECTS_URL: REDIS_URL,
      EFFECTS: effects,
      LEASE_MS: String(LEASE_MS),
    };
    [doomed, survivor] = await Promise.all([spawnReceiver({ ...env, HANG_ID: hung.id }), spawnReceiver(env)]);
  });
  afterAll(async () => {
    await Promise.all([doomed?.kill(), survivor?.kill()]);
    await store.close();
    await removeKeys(redis, prefix);
    redis.disconnect();
  });

  const count = async (kind: "started" | "done") => Number((await redis.get(`${effects}${kind}:${hung.id}`)) ?? 0);

  it("answers 409 while its lease lives, processes the redelivery once it expires, and ignores the dead owner", async () => {
    // The doomed process claims the notification and its handler never returns.
    void deliver(doomed.url, hung).catch(() => {}); // its connection dies with the process
    await eventually(async () => (await count("started")) === 1, 10_000, "the handler to start");
    const claimed = (await store.get(hung.id))!;
    expect(claimed).toMatchObject({ state: "processing", attempts: 1 });

    // Past the first lease the heartbeat has kept the claim alive: the other process must not run it.
    await sleep(LEASE_MS * 1.5);
    const whileAlive = await deliverPast503(survivor.url, hung);
    expect(whileAlive.status).toBe(409);
    expect((await store.get(hung.id))!.leaseUntil).toBeGreaterThan(claimed.leaseUntil!);

    await doomed.kill();
    const killedAt = performance.now();

    // The lease outlives its owner for a while: redeliveries are told to come back, then processed.
    const answers: Delivery[] = [];
    for (;;) {
      const answer = await deliverPast503(survivor.url, hung);
      answers.push(answer);
      if (answer.status !== 409) break;
      expect(answer.body.processed).toBe(false);
      expect(Number(answer.retryAfter)).toBeGreaterThanOrEqual(1);
      await sleep(50);
    }
    const takenOverAfter = performance.now() - killedAt;
    expect(answers[0]!.status).toBe(409);
    expect(answers.at(-1)).toMatchObject({ status: 200, body: { processed: true, message: "processed" } });
    expect(takenOverAfter).toBeLessThan(LEASE_MS + 1_000);
    expect(await count("started")).toBe(2);
    expect(await count("done")).toBe(1);

    const completed = (await store.get(hung.id))!;
    expect(completed).toMatchObject({
      state: "completed",
      attempts: 2,
      answer: { processed: true, message: "processed" },
    });
    expect(completed.owner).not.toBe(claimed.owner);

    // Writes still carrying the dead owner's token, as a paused process or a late command would send.
    expect(await store.complete({ id: hung.id, owner: claimed.owner! }, { processed: false, message: "late" })).toBe(
      false,
    );
    expect(await store.fail({ id: hung.id, owner: claimed.owner! }, "handler_failed")).toBe(false);
    expect(await store.extend({ id: hung.id, owner: claimed.owner! }, LEASE_MS)).toBe(false);
    expect(await store.release({ id: hung.id, owner: claimed.owner! })).toBe(false);
    expect(await store.get(hung.id)).toEqual(completed);

    const duplicate = await deliverPast503(survivor.url, hung);
    expect(duplicate).toMatchObject({ status: 200, body: { processed: true, message: "already processed" } });
    expect(await count("done")).toBe(1);
  });
});
