import {
  createReceiver,
  memoryStore,
  type SubscriptionNotification,
  subscriptionNotificationSchema,
} from "merchant-webhooks";
import { redisStore } from "merchant-webhooks/redis";
import { pino } from "pino";
import {
  fingerprintOf,
  handlerContext,
  handlerLogger,
  normalizeHeaders,
  parseJsonObject,
  respond,
  runHandler,
} from "./core-internals.js";
import { type Step, timeSteps } from "./cpu-rounds.js";
import { notificationText } from "./notification-body.js";

/**
 * Where a notification's CPU goes in the core: each step timed alone, in-process, on the same ~2.2 KB
 * renewal, beside the whole `receiver.handle` it is part of (memory store, then redisStore: client-side
 * CPU only, the Redis server's share is not in this process). What the steps do not add up to is the
 * glue between them (objects, promises, the switch on the claim).
 */
const size = Number(process.env.STEPS_BATCH ?? 5_000);
const rounds = Number(process.env.STEPS_ROUNDS ?? 7);

const encoder = new TextEncoder();
let next = 0;
const texts = (count: number) => Array.from({ length: count }, () => notificationText(`step-${next++}`));
const notification = subscriptionNotificationSchema.parse(
  JSON.parse(notificationText("step-template")),
) as SubscriptionNotification;
// What a Node server hands over for an autocannon request.
const nodeHeaders = {
  host: "127.0.0.1:3000",
  connection: "keep-alive",
  "content-type": "application/json",
  "content-length": "2199",
};

const logger = pino(pino.destination({ dest: "/dev/null", sync: false }));
const ctxLogger = handlerLogger(logger, {});
const memory = memoryStore({ maxEntries: 1_000_000 });
const redis = redisStore({
  connection: process.env.REDIS_URL ?? "redis://127.0.0.1:6379",
  prefix: `bench:steps:${process.pid}:`,
  retentionSeconds: 600,
});
const receivers = {
  memory: createReceiver({ logger, idempotency: memory, onRenew: () => {} }),
  redis: createReceiver({ logger, idempotency: redis, onRenew: () => {} }),
};
const limits = { timeoutMs: 10_000, leaseMs: 30_000, extendLease: async () => true };
const answer = { processed: true, message: "processed" };

/** `inCore`: a step a notification takes through the whole core on the memory store. */
const steps: Array<Step & { inCore?: boolean }> = [
  {
    name: "whole core, memory store",
    async: true,
    prepare(count) {
      const bodies = texts(count).map((text) => encoder.encode(text));
      return (i) => receivers.memory.handle({ method: "POST", headers: nodeHeaders, rawBody: bodies[i]! });
    },
  },
  {
    name: "whole core, redisStore (client CPU)",
    async: true,
    prepare(count) {
      const bodies = texts(count).map((text) => encoder.encode(text));
      return (i) => receivers.redis.handle({ method: "POST", headers: nodeHeaders, rawBody: bodies[i]! });
    },
  },
  {
    name: "headers (normalizeHeaders)",
    inCore: true,
    prepare: () => () => normalizeHeaders(nodeHeaders),
  },
  {
    name: "UTF-8 decode + JSON.parse (parseJsonObject)",
    inCore: true,
    prepare(count) {
      const bodies = texts(count).map((text) => encoder.encode(text));
      return (i) => parseJsonObject(bodies[i]!);
    },
  },
  {
    name: "of which JSON.parse",
    prepare(count) {
      const bodies = texts(count);
      return (i) => JSON.parse(bodies[i]!);
    },
  },
  {
    name: "zod (subscriptionNotificationSchema.safeParse)",
    inCore: true,
    prepare(count) {
      const bodies = texts(count).map((text) => JSON.parse(text));
      return (i) => subscriptionNotificationSchema.safeParse(bodies[i]);
    },
  },
  {
    name: "fingerprint (canonical JSON + SHA-256)",
    inCore: true,
    prepare(count) {
      const bodies = texts(count).map((text) => JSON.parse(text));
      return (i) => fingerprintOf(bodies[i]!);
    },
  },
  {
    name: "store claim + complete, memory",
    inCore: true,
    prepare(count) {
      const ids = texts(count).map((_, i) => `claim-${next}-${i}`);
      return (i) => {
        memory.claim({ id: ids[i]!, fingerprint: "f", owner: "o", leaseMs: 30_000 });
        memory.complete({ id: ids[i]!, owner: "o" }, answer);
      };
    },
  },
  {
    name: "store claim + complete, redisStore (client CPU)",
    async: true,
    prepare(count) {
      const ids = texts(count).map((_, i) => `claim-${next}-${i}`);
      return async (i) => {
        await redis.claim({ id: ids[i]!, fingerprint: "f", owner: "o", leaseMs: 30_000 });
        await redis.complete({ id: ids[i]!, owner: "o" }, answer);
      };
    },
  },
  {
    name: "handler ctx (handlerContext)",
    inCore: true,
    prepare: () => () =>
      handlerContext({
        notification,
        attempt: 1,
        headers: nodeHeaders,
        receivedAt: Date.now(),
        signal: () => new AbortController().signal,
        baseLogger: ctxLogger,
      }),
  },
  {
    name: "run handler (runHandler, sync handler)",
    inCore: true,
    async: true,
    prepare: () => () =>
      runHandler(
        () => {},
        notification,
        () => ({}) as never,
        limits,
      ),
  },
  {
    name: "log line (pino)",
    inCore: true,
    prepare: () => () =>
      logger.info(
        {
          notification_id: notification.id,
          event_type: notification.event_type,
          merchant_id: notification.resource.merchant_id,
          subscription_id: notification.resource.id,
          attempt: 1,
          outcome: "processed",
          status: 200,
          duration_ms: 0.123,
        },
        "notification handled",
      ),
  },
  {
    name: "answer (respond: headers + JSON.stringify)",
    prepare: () => () => respond(200, answer, "semantic"),
  },
];

const timings = await timeSteps(steps, { rounds, size, warmup: 5_000 });
await redis.close();
const whole = timings[0]!;
const parts = timings.filter((_, i) => steps[i]!.inCore);
timings.push({
  name: "rest of the whole core, memory store: the glue between the steps",
  us: Math.round((whole.us - parts.reduce((sum, { us }) => sum + us, 0)) * 100) / 100,
});
if (process.env.BENCH_JSON) console.log(JSON.stringify(timings));
else console.table(timings);
