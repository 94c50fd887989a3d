// The handler decorators of the Nest module, and finding the methods they mark on provider instances.
// The marks live on the class's prototype under a registered symbol, not in reflect-metadata, so they
// need no emitted metadata and survive the package being loaded twice (its ESM and CJS builds).
import type {
  ErrorHook,
  Handler,
  HandlerFor,
  HandlerHooks,
  SubscriptionHandlers,
} from "../../src/dispatch/handlers.js";
import { MerchantWebhooksError } from "../../src/shared/errors.js";

/** The receiver option a decorated method becomes. */
export type DecoratedKey = keyof SubscriptionHandlers | keyof HandlerHooks;

const MARKS = Symbol.for("merchant-webhooks.nest.handlers");

interface Mark {
  key: DecoratedKey;
  method: string | symbol;
}

type Marked = { [MARKS]?: Mark[] };

/**
 * A method decorator whose method must be assignable to `H`, the handler's type as `defineHandlers`
 * types it: a method of the wrong signature (an `onCancel` notification in `@OnRenew()`) does not
 * compile. Legacy (`experimentalDecorators`) decorators, as Nest uses.
 */
export type HandlerDecorator<H> = <T extends H>(
  target: object,
  method: string | symbol,
  descriptor: TypedPropertyDescriptor<T>,
) => void;

function mark<H>(key: DecoratedKey): () => HandlerDecorator<H> {
  return () => (target, method) => {
    const prototype = target as Marked;
    // Own marks only: a subclass adds to a copy, never to its parent's list.
    const own = Object.hasOwn(prototype, MARKS) ? prototype[MARKS]! : [];
    if (!Object.hasOwn(prototype, MARKS))
      Object.defineProperty(prototype, MARKS, { value: own, enumerable: false, configurable: true });
    own.push({ key, method });
  };
}

/** `@OnCreated()` on a provider's method: it handles `SUBSCRIPTION_CREATED`, typed as `onCreated`. */
export const OnCreated = mark<HandlerFor<"SUBSCRIPTION_CREATED">>("onCreated");
/** `@OnRenew()` on a provider's method: it handles `SUBSCRIPTION_RENEW`, typed as `onRenew`. */
export const OnRenew = mark<HandlerFor<"SUBSCRIPTION_RENEW">>("onRenew");
/** `@OnCancel()` on a provider's method: it handles `SUBSCRIPTION_CANCELLED`, typed as `onCancel`. */
export const OnCancel = mark<HandlerFor<"SUBSCRIPTION_CANCELLED">>("onCancel");
/** `@OnSuspend()` on a provider's method: it handles `SUBSCRIPTION_SUSPENDED`, typed as `onSuspend`. */
export const OnSuspend = mark<HandlerFor<"SUBSCRIPTION_SUSPENDED">>("onSuspend");
/** `@OnResume()` on a provider's method: it handles `SUBSCRIPTION_RESUMED`, typed as `onResume`. */
export const OnResume = mark<HandlerFor<"SUBSCRIPTION_RESUMED">>("onResume");
/** `@OnUnknown()` on a provider's method: `UNKNOWN` and every event_type this version does not know. */
export const OnUnknown = mark<Handler>("onUnknown");
/** `@OnAny()` on a provider's method: runs for every valid notification after its typed handler. */
export const OnAny = mark<Handler>("onAny");
/** `@OnError()` on a provider's method: told about each handler failure or time-out, for alerting. */
export const OnError = mark<ErrorHook>("onError");

/** One decorated method, found on an instance: for the duplicate check's message. */
interface Found {
  handler: (...args: never[]) => unknown;
  where: string;
}

/**
 * The handlers decorated on `instances` (Nest's providers, once created), each bound to its instance.
 * A second handler for one key, on another method or given in the module's options (`given`), is a
 * boot error naming both.
 */
export function decoratedHandlers(
  instances: Iterable<{ instance: object; name: string }>,
  given: Partial<Record<DecoratedKey, unknown>>,
): SubscriptionHandlers & HandlerHooks {
  const found = new Map<DecoratedKey, Found>();
  for (const [key, value] of Object.entries(given))
    if (value !== undefined)
      found.set(key as DecoratedKey, { handler: value as Found["handler"], where: "the module's options" });
  for (const { instance, name } of instances) {
    for (const { key, method } of marksOf(instance)) {
      const where = `${name}.${String(method)}`;
      const earlier = found.get(key);
      if (earlier)
        throw new MerchantWebhooksError(
          "MW_NEST_DUPLICATE_HANDLER",
          `two handlers for ${key}: ${earlier.where} and ${where}; one event has one handler (call the other from it)`,
        );
      const fn = (instance as Record<string | symbol, Found["handler"]>)[method]!;
      found.set(key, { handler: fn.bind(instance), where });
    }
  }
  // Each handler's signature was checked where it was declared (the decorator's type, or the options').
  return Object.fromEntries([...found].map(([key, { handler }]) => [key, handler])) as SubscriptionHandlers &
    HandlerHooks;
}

/** Every mark on the instance's prototype chain, the class's own first. */
function marksOf(instance: object): Mark[] {
  const marks: Mark[] = [];
  const seen = new Set<string | symbol>();
  for (let proto = Object.getPrototypeOf(instance) as Marked | null; proto && proto !== Object.prototype; ) {
    if (Object.hasOwn(proto, MARKS))
      for (const found of proto[MARKS]!) {
        // An override decorated again in a subclass is one handler, not two.
        if (seen.has(found.method)) continue;
        seen.add(found.method);
        marks.push(found);
      }
    proto = Object.getPrototypeOf(proto) as Marked | null;
  }
  return marks;
}
