import { Redis } from "ioredis";
import type { NotificationWorker } from "merchant-webhooks/bullmq";
import { redisStore } from "merchant-webhooks/redis";
import { pino } from "pino";
import { hotWorker } from "./hot-worker.js";

/**
 * One worker process of `bench/hot-drain-processes.ts`: loads and connects, says "ready", starts its
 * `createWorker` (concurrency 20) on "go", and closes on "close". Each handler call is one Redis write,
 * the notification id pushed onto the run's effects list, which the parent reads for order and counts;
 * a stale one is pushed as `stale:<id>`.
 */
const url = process.env.HOT_DRAIN_URL!;
const run = process.env.HOT_DRAIN_RUN!;
const logger = pino({ level: "silent" });
const redis = new Redis(url);
const store = redisStore({ connection: url, prefix: `{${run}}idem:` });
const effects = `{${run}}effects`;
let worker: NotificationWorker | undefined;

await redis.ping();
process.on("message", async (message) => {
  if (message === "go") {
    worker = hotWorker(
      { url, run, store, logger },
      async (notification) => {
        await redis.rpush(effects, notification.id);
      },
      async (notification) => {
        await redis.rpush(effects, `stale:${notification.id}`);
      },
    );
  } else if (message === "close") {
    await worker?.close({ timeoutMs: 5_000 });
    await store.close();
    redis.disconnect();
    process.disconnect?.();
    process.exit(0);
  }
});
process.send!("ready");
