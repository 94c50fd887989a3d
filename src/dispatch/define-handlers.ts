import type { Handler, HandlerHooks, SubscriptionHandlers } from "./handlers.js";

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
