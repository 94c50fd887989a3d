import { createReceiver, type IdempotencyStore, type NotificationQueue, type ReceiverOptions } from "merchant-webhooks";
import { type BullmqQueueOptions, bullmqQueue } from "merchant-webhooks/bullmq";
import { createAdmin, memoryRecordings } from "merchant-webhooks/console";
import { silentLogger } from "../support/capture-logger.js";
import { REDIS_URL } from "../support/redis.js";

/**
 * What the console tests share: a receiver recording into memory and handing notifications, in order,
 * to a BullMQ queue whose failed jobs stay dead letters (one attempt), and the admin over all three.
 */
export function consoleRig(
  store: IdempotencyStore,
  queueOptions: Pick<BullmqQueueOptions, "name" | "prefix" | "encryptionKey">,
  receiverOptions: Partial<ReceiverOptions> = {},
) {
  const queue = bullmqQueue({ connection: REDIS_URL, jobOptions: { attempts: 1 }, ...queueOptions });
  return { queue, ...consoleOver(store, queue, receiverOptions) };
}

/** A receiver recording into memory and handing notifications, in order, to `queue`; the admin over all three. */
export function consoleOver(
  store: IdempotencyStore,
  queue: NotificationQueue,
  receiverOptions: Partial<ReceiverOptions> = {},
) {
  const recordings = memoryRecordings();
  const receiver = createReceiver({
    logger: silentLogger(),
    idempotency: store,
    queue,
    record: recordings,
    ordering: true,
    ...receiverOptions,
  });
  const admin = createAdmin({ idempotency: store, queue, recorder: recordings });
  return { recordings, receiver, admin };
}
