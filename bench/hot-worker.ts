import type { IdempotencyStore, SubscriptionNotification } from "merchant-webhooks";
import { createWorker, type NotificationWorker } from "merchant-webhooks/bullmq";
import type { Logger } from "pino";

/** The hot-drain benches' worker: queue "hot" under the run's prefix, concurrency 20, a renewal handler and onStale. */
export function hotWorker(
  options: { url: string; run: string; store: IdempotencyStore; logger: Logger },
  onRenew: (notification: SubscriptionNotification) => Promise<void>,
  onStale: (notification: SubscriptionNotification) => Promise<void>,
): NotificationWorker {
  return createWorker({
    connection: options.url,
    name: "hot",
    prefix: `{${options.run}}`,
    idempotency: options.store,
    logger: options.logger,
    concurrency: 20,
    onRenew,
    onStale,
  });
}
