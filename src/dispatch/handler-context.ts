import type { Logger } from "pino";
import { positionToRfc3339 } from "../idempotency/position.js";
import type { TransactionHandle } from "../idempotency/transaction.js";
import { SUBSCRIPTION_EVENTS } from "../schema/event-types.js";
import { type AnyEventObject, eventObjectOf, type SubscriptionNotification } from "../schema/index.js";
import type { HandlerContext } from "./handlers.js";

export interface HandlerContextInput {
  notification: SubscriptionNotification;
  attempt: number;
  headers: Readonly<Record<string, string>>;
  receivedAt: number;
  /** Made on first read: most handlers never look at the signal. */
  signal: () => AbortSignal;
  /** The redacting logger (`handlerLogger`) the per-notification child is made from. */
  baseLogger: Logger;
  /** With `ordering`, in the sortable form the store keeps. */
  previousPosition?: string | undefined;
  /** The open transaction of a store that claims in one (`ctx.transaction`). */
  transaction?: unknown;
}

/**
 * `ctx.event`: for a known event type the object its row names (possibly absent), so the handler's
 * type can say which it is; otherwise whichever event object the notification carries.
 */
function eventFor(notification: SubscriptionNotification): AnyEventObject | undefined {
  const type = notification.event_type;
  if (!Object.hasOwn(SUBSCRIPTION_EVENTS, type)) return eventObjectOf(notification)?.event;
  return notification.resource[SUBSCRIPTION_EVENTS[type as keyof typeof SUBSCRIPTION_EVENTS].eventObjectKey];
}

/**
 * A class rather than an object literal with getters: getters defined in a literal are closures made
 * per notification, each holding the scope of the call that made them, which under load pushed several
 * KB per request out of the young generation. Prototype getters are made once; per notification there
 * are only the fields.
 */
class NotificationContext implements HandlerContext {
  readonly id: string;
  readonly eventType: string;
  readonly attempt: number;
  readonly headers: Readonly<Record<string, string>>;
  // An own property only when there is a previous position: `declare` keeps the class from adding it.
  declare readonly previousPosition?: string;
  // Likewise an own property only inside a store's transaction.
  declare readonly transaction: TransactionHandle;
  readonly #notification: SubscriptionNotification;
  readonly #receivedAtMs: number;
  readonly #makeSignal: () => AbortSignal;
  readonly #baseLogger: Logger;
  #receivedAt: Date | undefined;
  #signal: AbortSignal | undefined;
  #log: Logger | undefined;

  constructor({
    notification,
    attempt,
    headers,
    receivedAt,
    signal,
    baseLogger,
    previousPosition,
    transaction,
  }: HandlerContextInput) {
    if (transaction !== undefined) (this as { transaction?: unknown }).transaction = transaction;
    if (previousPosition !== undefined)
      (this as { previousPosition?: string }).previousPosition = positionToRfc3339(previousPosition);
    this.#notification = notification;
    this.id = notification.id;
    this.eventType = notification.event_type;
    this.attempt = attempt;
    this.headers = headers;
    this.#receivedAtMs = receivedAt;
    this.#makeSignal = signal;
    this.#baseLogger = baseLogger;
  }

  get event(): AnyEventObject | undefined {
    return eventFor(this.#notification);
  }

  get signal(): AbortSignal {
    return (this.#signal ??= this.#makeSignal());
  }

  get receivedAt(): Date {
    return (this.#receivedAt ??= new Date(this.#receivedAtMs));
  }

  // Built on first use: a pino child costs more than the rest of ctx together.
  get log(): Logger {
    return (this.#log ??= this.#baseLogger.child({
      notification_id: this.id,
      event_type: this.eventType,
      attempt: this.attempt,
    }));
  }
}

/** The `ctx` a handler gets, the same in receivers and queue workers. */
export function handlerContext(input: HandlerContextInput): HandlerContext {
  return new NotificationContext(input);
}
