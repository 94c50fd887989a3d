import type { Logger } from "pino";
import type { SubscriptionNotification } from "../schema/index.js";
import type { HandlerContext } from "./handlers.js";
import { positionToRfc3339 } from "../ordering/position.js";

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
}

/** The `ctx` a handler gets, the same in receivers and queue workers. */
export function handlerContext({ notification, attempt, headers, receivedAt, signal, baseLogger, previousPosition }: HandlerContextInput): HandlerContext {
  let log: Logger | undefined;
  let abortSignal: AbortSignal | undefined;
  return {
    ...(previousPosition === undefined ? {} : { previousPosition: positionToRfc3339(previousPosition) }),
    id: notification.id,
    eventType: notification.event_type,
    attempt,
    get signal() {
      return (abortSignal ??= signal());
    },
    headers,
    receivedAt: new Date(receivedAt),
    // Built on first use: a pino child costs more than the rest of ctx together.
    get log() {
      return (log ??= baseLogger.child({ notification_id: notification.id, event_type: notification.event_type, attempt }));
    },
  };
}
