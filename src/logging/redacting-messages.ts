import type { Logger } from "pino";
import { type RedactOptions, redactText } from "./redact.js";

/**
 * `logger` with the string arguments of every log call (the message and its `%s` arguments) passed
 * through `redactText`: pino serializers only see objects, and a handler writing
 * `` ctx.log.info(`charging ${card.card_number}`) `` would otherwise put the number in the log. Its
 * children are wrapped the same way. Costs one Proxy per logger, and work only when a line is written.
 */
export function redactingMessages(logger: Logger, options: RedactOptions): Logger {
  const pii = options.pii ?? true;
  const levels = new Set(Object.keys(logger.levels.values));
  const redactArgs = (args: unknown[]) => args.map((arg) => (typeof arg === "string" ? redactText(arg, pii) : arg));
  return new Proxy(logger, {
    get(target, prop) {
      const value: unknown = Reflect.get(target, prop, target);
      if (typeof value !== "function") return value;
      if (prop === "child")
        return (...args: unknown[]) =>
          redactingMessages((value as (...a: unknown[]) => Logger).apply(target, args), options);
      if (typeof prop === "string" && levels.has(prop))
        return (...args: unknown[]) => (value as (...a: unknown[]) => void).apply(target, redactArgs(args));
      return (value as (...a: unknown[]) => unknown).bind(target);
    },
  });
}
