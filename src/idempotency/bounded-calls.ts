/**
 * Stores whose every call settles within a limit of their own (`redisStore`: its `timeoutMs`), with
 * that limit. A worker bounds a store's calls itself only when the store does not already: a second
 * timer and promise race per call would only ever lose to the store's own (see `workerStore`).
 */
const callLimits = new WeakMap<object, number>();

/** Record that every call of `store` settles within `timeoutMs`, answering `StoreUnavailableError` past it. */
export function boundsItsCalls<T extends object>(store: T, timeoutMs: number): T {
  callLimits.set(store, timeoutMs);
  return store;
}

/** The limit `store` keeps every call within, when it keeps one. */
export function callLimitOf(store: object): number | undefined {
  return callLimits.get(store);
}
