import type { IdempotencyStore } from "merchant-webhooks";

/** `store` with its record reads (`get`) counted: what a sweep costs in reads, whatever it runs on. */
export function countingReads<S extends IdempotencyStore>(store: S): { store: S; reads: () => number } {
  let reads = 0;
  const counted = new Proxy(store, {
    get(target, name, receiverOf) {
      const value = Reflect.get(target, name, receiverOf);
      if (name !== "get" || typeof value !== "function") return value;
      return (...args: unknown[]) => {
        reads++;
        return value.apply(target, args);
      };
    },
  });
  return { store: counted, reads: () => reads };
}
