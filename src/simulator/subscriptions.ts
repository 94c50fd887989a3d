import type { SubscriptionNotification } from "../schema/index.js";
import type { Product, Subscriber } from "../schema/types.js";
import { buildNotification } from "../testing/build-notification.js";
import { idSequence } from "./clock.js";

export interface CreateSubscriptionInput {
  merchant_id: string;
  subscriber: Subscriber;
  product: Product;
  /** The merchant's reference; default one derived from the subscription id. */
  reference_id?: string;
  /**
   * The billing period: the notification of phase n says the next charge is due at creation time
   * plus n periods (`next_execution_time`, while the subscription is active). Default 30 days.
   */
  periodMs?: number;
}

/** The subscription lifecycle calls; each sends its notification and resolves to it once queued. */
export interface SimulatedSubscription {
  readonly id: string;
  /** The cycle the subscription is in: 1 after create, +1 per renewal. */
  readonly phase: number;
  readonly status: string;
  renew(): Promise<SubscriptionNotification>;
  suspend(reason?: string): Promise<SubscriptionNotification>;
  resume(): Promise<SubscriptionNotification>;
  cancel(reason?: string): Promise<SubscriptionNotification>;
}

const STATUS_AFTER: Readonly<Record<string, string>> = {
  SUBSCRIPTION_CREATED: "ACTIVE",
  SUBSCRIPTION_RENEW: "ACTIVE",
  SUBSCRIPTION_SUSPENDED: "SUSPENDED",
  SUBSCRIPTION_RESUMED: "ACTIVE",
  SUBSCRIPTION_CANCELLED: "CANCELLED",
};

/**
 * Subscriptions and the notifications their lifecycle sends. Every notification of one subscription
 * gets a later `resource.update_time` than the one before (milliseconds, strictly increasing), so a
 * receiver's ordering can tell a late retry from a newer event.
 */
export function createSubscriptions(
  send: (notification: SubscriptionNotification) => void,
  /** Charges a renewal: the id of the paid order its `payment_detail.order_id` names. */
  chargeRenewal?: (subscription: { id: string; merchant_id: string; phase: number }) => string,
) {
  const ids = idSequence("SUB");
  const all = new Map<string, SimulatedSubscription>();

  function create(input: CreateSubscriptionInput): {
    subscription: SimulatedSubscription;
    created: SubscriptionNotification;
  } {
    const id = ids();
    const createdAt = new Date();
    let phase = 1;
    let status = "ACTIVE";
    let lastUpdate = 0;
    const periodMs = input.periodMs ?? 30 * 24 * 60 * 60 * 1000;

    function notify(eventType: string, reason?: string): SubscriptionNotification {
      // Strictly later than the previous event of this subscription, even within one millisecond.
      const update = Math.max(Date.now(), lastUpdate + 1);
      lastUpdate = update;
      const at = new Date(update).toISOString();
      const built = buildNotification(
        eventType,
        {
          resource: {
            id,
            merchant_id: input.merchant_id,
            reference_id: input.reference_id ?? `ref-${id}`,
            subscriber: input.subscriber,
            product: input.product,
            execution_phase: String(phase),
          },
        },
        { random: true, at: new Date(update) },
      );
      const resource = built.resource;
      resource.create_time = createdAt.toISOString();
      resource.update_time = at;
      built.create_time = at;
      built.update_time = at;
      if (reason !== undefined) {
        if (resource.unsubscription_event) resource.unsubscription_event.reason = reason;
        if (resource.suspended_event) resource.suspended_event.reason = reason;
      }
      status = STATUS_AFTER[eventType] ?? status;
      resource.subscription_status = status;
      if (status === "ACTIVE") resource.next_execution_time = createdAt.getTime() + phase * periodMs;
      else delete resource.next_execution_time;
      const detail = resource.renewal_event?.payment_detail;
      if (eventType === "SUBSCRIPTION_RENEW" && detail && chargeRenewal) {
        detail.order_id = chargeRenewal({ id, merchant_id: input.merchant_id, phase });
        detail.status = "COMPLETED";
      }
      send(built);
      return built;
    }

    const subscription: SimulatedSubscription = {
      id,
      get phase() {
        return phase;
      },
      get status() {
        return status;
      },
      renew: async () => {
        phase++;
        return notify("SUBSCRIPTION_RENEW");
      },
      suspend: async (reason) => notify("SUBSCRIPTION_SUSPENDED", reason),
      resume: async () => notify("SUBSCRIPTION_RESUMED"),
      cancel: async (reason) => notify("SUBSCRIPTION_CANCELLED", reason),
    };
    all.set(id, subscription);
    return { subscription, created: notify("SUBSCRIPTION_CREATED") };
  }

  return {
    create,
    get: (id: string) => all.get(id),
  };
}
