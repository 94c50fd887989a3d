import type { TextMapGetter } from "@opentelemetry/api";

/** Request headers as adapters pass them: Node's object or the Fetch API's `Headers` (`HeaderSource`). */
export type HeaderSource = Headers | Record<string, string | string[] | number | undefined>;

const isFetchHeaders = (source: HeaderSource): source is Headers =>
  typeof (source as Headers).get === "function" && typeof (source as Headers).forEach === "function";

/**
 * Reads `traceparent` and `tracestate` from request headers as an adapter passes them (Node's object or
 * the Fetch API's `Headers`), without copying them first: the propagator asks for two names.
 */
export const headerGetter: TextMapGetter<HeaderSource> = {
  keys: (source) => (isFetchHeaders(source) ? [...source.keys()] : Object.keys(source)),
  get(source, key) {
    if (isFetchHeaders(source)) return source.get(key) ?? undefined;
    let value = source[key];
    if (value === undefined) {
      const name = Object.keys(source).find((candidate) => candidate.toLowerCase() === key);
      value = name === undefined ? undefined : source[name];
    }
    if (value === undefined) return undefined;
    return Array.isArray(value) ? value : String(value);
  },
};
