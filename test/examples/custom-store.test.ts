import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Redis } from "ioredis";
import { createReceiver, type SubscriptionNotification } from "merchant-webhooks";
import { bullmqQueue, createWorker } from "merchant-webhooks/bullmq";
import { buildNotification } from "merchant-webhooks/testing";
import { afterAll, describe, expect, it } from "vitest";
import { mapStore } from "../../examples/custom-store/map-store.js";
import { silentLogger } from "../support/capture-logger.js";
import { post } from "../support/notifications.js";
import { eventually, REDIS_URL, removeKeys, uniquePrefix } from "../support/redis.js";

const EXAMPLE = fileURLToPath(new URL("../../examples/custom-store/map-store.ts", import.meta.url));
const STORES_PAGE = fileURLToPath(new URL("../../docs/stores.md", import.meta.url));
const logger = silentLogger();

const message = (response: { body: unknown }) => (JSON.parse(String(response.body)) as { message: string }).message;

describe("a store of your own (docs/stores.md, examples/custom-store/map-store.ts)", () => {
  const prefix = uniquePrefix("custom-store");
  const redis = new Redis(REDIS_URL);
  const cleanup: Array<() => Promise<unknown>> = [];
  afterAll(async () => {
    for (const step of cleanup.reverse()) await step();
    await removeKeys(redis, prefix);
    redis.disconnect();
  });

  it("is the example docs/stores.md shows, word for word (which the docs' snippet check compiles)", () => {
    const page = readFileSync(STORES_PAGE, "utf8");
    expect(page).toContain(`\`\`\`ts\n${readFileSync(EXAMPLE, "utf8")}\`\`\``);
  });

  it("runs each notification once with a receiver that runs it now", async () => {
    const store = mapStore();
    const ran: string[] = [];
    const receiver = createReceiver({ logger, idempotency: store, onRenew: (n) => void ran.push(n.id) });
    cleanup.push(() => receiver.close());
    const body = buildNotification("SUBSCRIPTION_RENEW", { id: "custom-run-1" });
    expect((await receiver.handle(post(body))).status).toBe(200);
    const again = await receiver.handle(post(body));
    expect(again.status).toBe(200);
    expect(ran).toEqual(["custom-run-1"]);
    expect(await store.get("custom-run-1")).toMatchObject({ state: "completed", attempts: 1 });
  });

  it("hands a notification to a BullMQ worker on the same store: taken from the queue, run once, a redelivery a duplicate", async () => {
    const store = mapStore();
    const name = "custom-store-queue";
    const queue = bullmqQueue({ connection: REDIS_URL, name, prefix });
    const receiver = createReceiver({ logger, idempotency: store, queue });
    cleanup.push(() => receiver.close());
    const body: SubscriptionNotification = buildNotification("SUBSCRIPTION_RENEW", { id: "custom-queued-1" });
    const accepted = await receiver.handle(post(body));
    expect(accepted.status).toBe(200);
    expect(await store.get("custom-queued-1")).toMatchObject({ state: "queued" });
    // Accepted before and not run yet: the redelivery is answered as already queued, not queued again.
    expect(message(await receiver.handle(post(body)))).toMatch(/already/);

    const ran: string[] = [];
    const worker = createWorker({
      connection: REDIS_URL,
      name,
      prefix,
      idempotency: store,
      logger,
      onRenew: (n) => void ran.push(n.id),
    });
    cleanup.push(() => worker.close({ timeoutMs: 2_000 }));
    await eventually(
      async () => (await store.get("custom-queued-1"))?.state === "completed",
      20_000,
      "the worker's run",
    );
    expect(ran).toEqual(["custom-queued-1"]);
    const duplicate = await receiver.handle(post(body));
    expect(duplicate.status).toBe(200);
    expect(ran).toEqual(["custom-queued-1"]);
  });
});
