import type { Logger } from "pino";
import type { SubscriptionNotification } from "../schema/index.js";
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
}

/**
 * A class rather than an object literal with getters: getters defined in a literal are closures made
 * per notification and keep the whole notification alive as long as the context lives, which under
 * load pushed several KB per request out of the young generation. Prototype getters keep no such scope.
 */
class NotificationContext implements HandlerContext {
  readonly id: string;
  readonly eventType: string;
  readonly attempt: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly #receivedAtMs: number;
  readonly #makeSignal: () => AbortSignal;
  readonly #baseLogger: Logger;
  #receivedAt: Date | undefined;
  #signal: AbortSignal | undefined;
  #log: Logger | undefined;

  constructor({ notification, attempt, headers, receivedAt, signal, baseLogger }: HandlerContextInput) {
    this.id = notification.id;
    this.eventType = notification.event_type;
    this.attempt = attempt;
    this.headers = headers;
    this.#receivedAtMs = receivedAt;
    this.#makeSignal = signal;
    this.#baseLogger = baseLogger;
  }

  get signal(): AbortSignal {
    return (this.#signal ??= this.#makeSignal());
  }

  get receivedAt(): Date {
    return (this.#receivedAt ??= new Date(this.#receivedAtMs));
  }

  // Built on first use: a pino child costs more than the rest of ctx together.
  get log(): Logger {
    return (this.#log ??= this.#baseLogger.child({ notification_id: this.id, event_type: this.eventType, attempt: this.attempt }));
  }
}

/** The `ctx` a handler gets, the same in receivers and queue workers. */
export function handlerContext(input: HandlerContextInput): HandlerContext {
  return new NotificationContext(input);
}
