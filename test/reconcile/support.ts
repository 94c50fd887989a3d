import { Redis } from "ioredis";
import type { Handler } from "merchant-webhooks";
import { eventReceiverOptions } from "merchant-webhooks";
import { type OrderEvent, orderEventSchema, type QueriedOrder } from "merchant-webhooks/client";
import { afterAll } from "vitest";
import type { IdempotencyStore } from "../../src/idempotency/store.js";
import { startWebhook } from "../cli/run-cli.js";
import { orderRequest } from "../client/fixtures.js";
import { REDIS_URL, removeKeys, uniquePrefix } from "../support/redis.js";

/** Effects a handler had, counted per order and status: what "exactly once" is measured on. */
export function effectCounter() {
  const counts = new Map<string, number>();
  const handler: Handler<OrderEvent> = async (event) => {
    const key = `${event.order.id}/${event.order.status}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  };
  return { counts, handler, calls: () => [...counts.values()].reduce((sum, count) => sum + count, 0) };
}

/** A receiver of order events (the provisional shape) on loopback, its handler wrapped as given. */
export function orderEventWebhook(store: IdempotencyStore, handler: Handler<OrderEvent>) {
  return startWebhook(eventReceiverOptions({ schema: orderEventSchema, idempotency: store, handler }));
}

/** An order request in one currency (the simulator takes one per order). */
export const simpleOrder = (reference: string, webhookUrl?: string) =>
  orderRequest(reference, {
    application_context: {
      payment_method: { name: "CHECKOUT_PAGE" },
      ...(webhookUrl ? { webhook_url: webhookUrl } : {}),
    },
  });

/** The order event the platform would send for `order`'s current state. */
export const orderEventOf = (order: QueriedOrder, id: string) => ({
  id,
  create_time: new Date().toISOString(),
  event_type: "ORDER_UPDATED",
  resource_type: "order",
  order,
});

/**
 * A Redis connection and a key prefix of the test's own, and a list of closes: after the tests the
 * closes run (last first) and the prefix's keys are removed.
 */
export function redisTestBed(label: string) {
  const redis = new Redis(REDIS_URL);
  const prefixes: string[] = [];
  const cleanup: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const close of cleanup.reverse()) await close();
    for (const prefix of prefixes) await removeKeys(redis, prefix);
    redis.disconnect();
  });
  const newPrefix = (name = label) => {
    const prefix = uniquePrefix(name);
    prefixes.push(prefix);
    return prefix;
  };
  return { redis, prefix: newPrefix(), newPrefix, cleanup };
}

/**
 * For a client made before the simulator it calls is listening (the webhook the simulator sends to
 * must be up first): its requests go to `to(url)` once given.
 */
export function laterBaseUrl() {
  const placeholder = "http://127.0.0.1:1";
  let target = placeholder;
  return {
    baseUrl: placeholder,
    fetch: ((input, init) => fetch(String(input).replace(placeholder, target), init)) as typeof fetch,
    to: (url: string) => void (target = url),
  };
}
