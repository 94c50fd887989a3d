import type { Logger } from "pino";
import type { TransactionHandle } from "../idempotency/transaction.js";
import { type SUBSCRIPTION_EVENTS, type SubscriptionEventType, subscriptionEventRows } from "../schema/event-types.js";
import type {
  AnyEventObject,
  KnownEventType,
  SubscriptionNotification,
  SubscriptionResource,
} from "../schema/index.js";
import type { PlatformHandle } from "./platform-handle.js";

/** What every handler gets beside the notification. */
export interface HandlerContext<
  Event = AnyEventObject | undefined,
  EventType extends string = KnownEventType | (string & {}),
> {
  /** The notification id (the envelope `id`), the idempotency key. */
  readonly id: string;
  /**
   * The notification's `event_type`: the literal type in a typed handler (`"SUBSCRIPTION_RENEW"` in
   * `onRenew`), the known types (and any other string) elsewhere, so a comparison with a misspelt
   * type does not compile.
   */
  readonly eventType: EventType;
  /**
   * The event object for this event type (`renewal_event` in `onRenew`, `unsubscription_event` in
   * `onCancel`, ...), typed for it; undefined when the notification does not carry it, since the
   * interface does not promise which object each type fills. In `onUnknown` and `onAny` without a
   * known type: whichever event object the notification carries (see `eventObjectOf`).
   */
  readonly event: Event;
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
  /**
   * With `postgresStore` (merchant-webhooks/postgres): the pg client of the open transaction the
   * notification's record commits in. Write the handler's effects through it and they commit with
   * the record, or roll back with it. Typed `pg.PoolClient` once `merchant-webhooks/postgres` is
   * imported anywhere in the program; undefined with other stores and with the in-process queue.
   */
  readonly transaction: TransactionHandle;
  /**
   * The platform API client the receiver was given (its `platform` option): ask the platform before
   * trusting a notification (QueryOrder for the order a renewal names, say). Typed `PaymentClient` once
   * `merchant-webhooks/client` is imported anywhere in the program; undefined when the receiver was
   * given none.
   */
  readonly platform: PlatformHandle;
}

/** The notification type a handler for `E` receives. */
export type NotificationOf<E extends string> = SubscriptionNotification & { event_type: E };

/** What `ctx.event` holds in a handler for `E`: the event object named for a known type, else any. */
export type EventObjectFor<E extends string> = E extends SubscriptionEventType
  ? SubscriptionResource[(typeof SUBSCRIPTION_EVENTS)[E]["eventObjectKey"]]
  : AnyEventObject | undefined;

/** The `event_type` a notification type carries, for `ctx.eventType`. */
export type EventTypeOf<N> = N extends { event_type: infer T extends string } ? T : string;

export type Handler<N = SubscriptionNotification, Event = AnyEventObject | undefined> = (
  notification: N,
  ctx: HandlerContext<Event, EventTypeOf<N>>,
) => void | Promise<void>;

/** The handler of one known event type: its notification and its event object typed for it. */
export type HandlerFor<E extends SubscriptionEventType> = Handler<NotificationOf<E>, EventObjectFor<E>>;

/** `onError`: told about each handler failure or time-out, for alerting. */
export type ErrorHook = (
  err: unknown,
  notification: SubscriptionNotification,
  ctx: HandlerContext,
) => void | Promise<void>;

export interface SubscriptionHandlers {
  onCreated?: HandlerFor<"SUBSCRIPTION_CREATED">;
  onRenew?: HandlerFor<"SUBSCRIPTION_RENEW">;
  onCancel?: HandlerFor<"SUBSCRIPTION_CANCELLED">;
  onSuspend?: HandlerFor<"SUBSCRIPTION_SUSPENDED">;
  onResume?: HandlerFor<"SUBSCRIPTION_RESUMED">;
  /** `UNKNOWN` and every event_type this version does not know yet. */
  onUnknown?: Handler;
}

/** Hooks around the handlers, taken by receivers and queue workers beside `SubscriptionHandlers`. */
export interface HandlerHooks {
  /**
   * Runs for every valid notification after its typed handler succeeds (or alone, when its type has
   * none), under the same claim, time limit and `ctx`. If it throws, the notification fails like a
   * handler failure (500, retried) and the retry runs both again. Not run for duplicates.
   */
  onAny?: Handler;
  /**
   * Called when the typed handler or `onAny` throws or times out, after the failure is recorded and
   * before the answer (500) is sent; awaited, so keep it short. What it throws is logged, never answered.
   */
  onError?: ErrorHook;
}

/** Handlers, hooks and `onStale`: what a receiver or worker takes beside its settings. */
export type DefinedHandlers = SubscriptionHandlers & HandlerHooks & { onStale?: Handler };

/**
 * Declare handlers apart from the receiver call, typed as they would be inside it: each handler's
 * notification and `ctx` are inferred, and a misspelt key (`onRenewal`) fails to compile instead of
 * being ignored. The same as writing `{ ... } satisfies SubscriptionHandlers`.
 */
export function defineHandlers<const H extends DefinedHandlers>(
  handlers: H & Record<Exclude<keyof H, keyof DefinedHandlers>, never>,
): H {
  return handlers;
}

/** The handler keys that an event_type can select. */
export type EventHandlerKey = keyof SubscriptionHandlers;

/** event_type → handler key, from the one event table. */
export const HANDLER_KEYS: Readonly<Record<string, EventHandlerKey>> = Object.fromEntries(
  subscriptionEventRows().map(([eventType, row]) => [eventType, row.handler]),
);

/** Every handler and hook key, for start-up checks of misspelt handlers. */
export const ALL_HANDLER_KEYS: readonly (keyof (SubscriptionHandlers & HandlerHooks))[] = [
  ...Object.values(HANDLER_KEYS),
  "onUnknown",
  "onAny",
  "onError",
];
