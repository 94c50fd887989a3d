import { randomUUID } from "node:crypto";
import { ORDER_EVENT_TYPE, REFUND_EVENT_TYPE } from "../client/schemas/events.js";
import type { QueriedOrder, RefundOrder } from "../client/types.js";
import type { SubscriptionNotification } from "../schema/index.js";
import { optionError } from "../shared/errors.js";
import { createApiServer, type Route } from "./api-server.js";
import { createDeliverer, type DeliveryMeta, standardWebhooksDeliverySigner } from "./deliverer.js";
import { type DeliveryRecord, snapshotDeliveries, type UndeliveredSummary, undeliveredOf } from "./delivery-log.js";
import { formatAttemptTable, formatUndelivered } from "./delivery-table.js";
import { createListTables, LIST_TABLES, type ListTableName } from "./list-tables.js";
import {
  checkOptions,
  DEFAULT_ATTEMPT_TIMEOUT_MS,
  DEFAULT_RETRY_SCHEDULE_MS,
  type PlatformSimulatorOptions,
} from "./options.js";
import { createOrderBook, type PayOptions } from "./order-book.js";
import { seededRandom } from "./random.js";
import { type CreateSubscriptionInput, createSubscriptions, type SimulatedSubscription } from "./subscriptions.js";

export interface PlatformSimulator {
  /** Serve the API on `port` (0: any free one); resolves to the base URL for `createPaymentClient`. */
  listen(port?: number): Promise<string>;
  readonly baseUrl: string;
  subscriptions: {
    /** Create a subscription and send SUBSCRIPTION_CREATED to `webhookUrl`. */
    create(input: CreateSubscriptionInput): Promise<SimulatedSubscription>;
    get(id: string): SimulatedSubscription | undefined;
  };
  orders: {
    /** The payer pays the order: COMPLETED and refundable; its order event goes to its webhook_url. */
    pay(id: string, options?: PayOptions): QueriedOrder;
  };
  /** The list endpoints' records: insert and remove between page fetches to test pagination. */
  lists: Pick<ReturnType<typeof createListTables>, "insert" | "remove" | "size">;
  /** Make the next `times` calls to `path` answer `status`, e.g. 503 to see a client retry. */
  failNext(path: string, status: number, times?: number): void;
  /** Requests the API has served. */
  readonly requestCount: number;
  /** Resolves when every delivery was answered processed:true or used up its schedule. */
  settled(): Promise<void>;
  /** Every delivery with its attempts, in the order they were created. */
  deliveries(): DeliveryRecord[];
  /** Deliveries not answered processed:true: exhausted and still pending. */
  undelivered(): UndeliveredSummary;
  /** The attempt log as a text table. */
  attemptTable(): string;
  /** The undelivered summary as text. */
  undeliveredTable(): string;
  /** Stop delivering and serving. */
  close(): Promise<void>;
}

/**
 * A local payment platform: the CreateOrder, QueryOrder, RefundPayment and list endpoints served from
 * memory, and subscription notifications and order and refund events delivered like a platform would,
 * with retries, time-outs and optional chaos.
 */
export function createPlatformSimulator(options: PlatformSimulatorOptions = {}): PlatformSimulator {
  checkOptions(options);
  const random = seededRandom(options.seed ?? Math.floor(Math.random() * 2 ** 32));
  const sign =
    options.sign ?? (options.secret !== undefined ? standardWebhooksDeliverySigner(options.secret) : undefined);
  const deliverer = createDeliverer({
    retrySchedule: options.retrySchedule ?? DEFAULT_RETRY_SCHEDULE_MS,
    timeScale: options.timeScale ?? 1,
    attemptTimeoutMs: options.attemptTimeoutMs ?? DEFAULT_ATTEMPT_TIMEOUT_MS,
    concurrency: options.concurrency ?? 16,
    chaos: options.chaos ?? {},
    sign,
    random,
    onAttempt: options.onAttempt,
  });
  let baseUrl = "";

  const eventId = () => `EVT-${randomUUID().replace(/-/g, "").slice(0, 20).toUpperCase()}`;
  function sendEvent(
    url: string,
    payload: { id: string; event_type: string; [field: string]: unknown },
    meta: Omit<DeliveryMeta, "id" | "event_type">,
  ): void {
    deliverer.send(url, payload, { id: payload.id, event_type: payload.event_type, ...meta });
  }

  const book = createOrderBook({
    baseUrl: () => baseUrl,
    events: {
      orderEvent(url, order) {
        const time = new Date().toISOString();
        sendEvent(
          url,
          { id: eventId(), create_time: time, event_type: ORDER_EVENT_TYPE, resource_type: "order", order },
          { kind: "order" },
        );
      },
      refundEvent(url, refund: RefundOrder & { origin_order_id: string }) {
        const time = new Date().toISOString();
        sendEvent(
          url,
          { id: eventId(), create_time: time, event_type: REFUND_EVENT_TYPE, resource_type: "refund", refund },
          { kind: "refund" },
        );
      },
    },
  });
  const lists = createListTables();

  const subscriptions = createSubscriptions(
    (notification: SubscriptionNotification) => {
      if (!options.webhookUrl)
        throw optionError(
          new Error("createPlatformSimulator: webhookUrl is needed to send subscription notifications"),
          "MW_INVALID_OPTION",
          "webhookUrl",
        );
      deliverer.send(options.webhookUrl, notification, {
        id: notification.id,
        kind: "subscription",
        event_type: notification.event_type,
        subscription_id: notification.resource.id,
      });
    },
    (subscription) =>
      book.renewalOrder(subscription.merchant_id, `${subscription.id}-phase-${subscription.phase}`, {
        currency_code: "USD",
        value: "9.99",
      }).id,
  );

  const routes = new Map<string, Route>([
    ["/v1/payment/orders", (body) => book.create(body)],
    ["/v1/payment/query", (body) => book.query(body)],
    ["/v1/refund/orders", (body) => book.refund(body)],
  ]);
  for (const name of Object.keys(LIST_TABLES) as ListTableName[]) {
    routes.set(LIST_TABLES[name].endpoint.path, (body) => lists.page(name, body));
  }
  const api = createApiServer(routes);

  return {
    async listen(port = 0) {
      baseUrl = await api.listen(port, options.host ?? "127.0.0.1");
      return baseUrl;
    },
    get baseUrl() {
      return baseUrl;
    },
    subscriptions: {
      async create(input) {
        return subscriptions.create(input).subscription;
      },
      get: (id) => subscriptions.get(id),
    },
    orders: { pay: (id, payOptions) => book.pay(id, payOptions) },
    lists: { insert: lists.insert, remove: lists.remove, size: lists.size },
    failNext: (path, status, times) => api.failNext(path, status, times),
    get requestCount() {
      return api.requests;
    },
    settled: () => deliverer.settled(),
    deliveries: () => snapshotDeliveries(deliverer.records),
    undelivered: () => undeliveredOf(snapshotDeliveries(deliverer.records)),
    attemptTable: () => formatAttemptTable(deliverer.records),
    undeliveredTable: () => formatUndelivered(undeliveredOf(deliverer.records)),
    async close() {
      await deliverer.close();
      await api.close();
    },
  };
}
