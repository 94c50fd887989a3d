import type { Logger } from "pino";
import type { SubscriptionNotification } from "../schema/index.js";
import { subscriptionEventRows } from "../schema/event-types.js";

/** What every handler gets beside the notification. */
export interface HandlerContext {
  /** The notification id (the envelope `id`), the idempotency key. */
  readonly id: string;
  readonly eventType: string;
  /** 1 on the first run of this id, 2 after one failed run, and so on. */
  readonly attempt: number;
  /** Aborted when the handler's time limit passes or its claim is lost; pass it to fetch, db calls... */
  readonly signal: AbortSignal;
  /** A pino child bound to this notification, redacting card and personal data. */
  readonly log: Logger;
  /** Request headers, lower-case names. */
  readonly headers: Readonly<Record<string, string>>;
  readonly receivedAt: Date;
  /**
   * With `ordering`: the position (RFC 3339, UTC) of the newest completed notification of this one's
   * subscription; undefined for the first.
   */
  readonly previousPosition?: string;
}

/** The notification type a handler for `E` receives. */
export type NotificationOf<E extends string> = SubscriptionNotification & { event_type: E };

export type Handler<N = SubscriptionNotification> = (notification: N, ctx: HandlerContext) => void | Promise<void>;

export interface SubscriptionHandlers {
  onCreated?: Handler<NotificationOf<"SUBSCRIPTION_CREATED">>;
  onRenew?: Handler<NotificationOf<"SUBSCRIPTION_RENEW">>;
  onCancel?: Handler<NotificationOf<"SUBSCRIPTION_CANCELLED">>;
  onSuspend?: Handler<NotificationOf<"SUBSCRIPTION_SUSPENDED">>;
  onResume?: Handler<NotificationOf<"SUBSCRIPTION_RESUMED">>;
  /** `UNKNOWN` and every event_type this version does not know yet. */
  onUnknown?: Handler;
}

/** event_type → handler key, from the one event table. */
export const HANDLER_KEYS: Readonly<Record<string, keyof SubscriptionHandlers>> = Object.fromEntries(
  subscriptionEventRows().map(([eventType, row]) => [eventType, row.handler]),
);

/** The handler key an event_type goes to; anything unrecognised goes to `onUnknown`. */
export function handlerKeyFor(eventType: string): keyof SubscriptionHandlers {
  return Object.hasOwn(HANDLER_KEYS, eventType) ? HANDLER_KEYS[eventType]! : "onUnknown";
}

export function handlerFor(handlers: SubscriptionHandlers, eventType: string): Handler | undefined {
  return handlers[handlerKeyFor(eventType)] as Handler | undefined;
}
