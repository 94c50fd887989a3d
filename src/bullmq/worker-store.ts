import { callLimitOf } from "../idempotency/bounded-calls.js";
import {
  DRAINED_LANE_CALLS,
  type DrainedLaneStore,
  type IdempotencyStore,
  type LaneStore,
  StoreUnavailableError,
} from "../idempotency/store.js";
import { claimsInTransaction, type TransactionalStore } from "../idempotency/transaction.js";
import type { RedisConnection } from "../redis/connect.js";
import { redisStore } from "../redis/index.js";
import { withTimeout } from "../shared/time-limit.js";

export interface WorkerStore {
  store: IdempotencyStore;
  /** Closes a store made here; one given in the options is left to its owner. */
  closeStore: () => Promise<void>;
}

/** The longest a worker waits for any store call before treating the store as unreachable. */
export const WORKER_STORE_CALL_TIMEOUT_MS = 5_000;

/**
 * The worker's store: the one given, else the one its receivers share on the same Redis; either way
 * with a deadline on every call. A store that ends every call within that deadline itself
 * (`redisStore` with a `timeoutMs` up to it) is used as it is; any other gets `storeWithDeadlines`.
 */
export function workerStore(options: { idempotency?: IdempotencyStore; connection: RedisConnection }): WorkerStore {
  const { store, closeStore } = options.idempotency
    ? { store: options.idempotency, closeStore: async () => {} }
    : sharedStore(options.connection);
  const ownLimit = callLimitOf(store);
  // Its own bound makes ours a timer and a promise race per call (two a job) that never fire first.
  if (ownLimit !== undefined && ownLimit <= WORKER_STORE_CALL_TIMEOUT_MS) return { store, closeStore };
  return { store: storeWithDeadlines(store, WORKER_STORE_CALL_TIMEOUT_MS), closeStore };
}

/**
 * `store` with every call bounded by `timeoutMs`: past it the call rejects with
 * `StoreUnavailableError`, which the worker answers as it does an unreachable store (the job is
 * postponed, a completion is retried, a failure is left to the lease). A store given to the worker may
 * sit on a connection that queues commands while its Redis fails over; without a bound, a call that
 * never settles would keep a job slot taken for good. A late answer is ignored: every write names its
 * claim's owner token, so one that lands late can only do what the lease would have done anyway.
 */
export function storeWithDeadlines(store: IdempotencyStore, timeoutMs: number): IdempotencyStore {
  // A store that claims in a transaction keeps that power. Its transactional calls are passed through
  // unbounded here: a claim abandoned by a deadline would leave its transaction open on a checked-out
  // connection, so such a store bounds its own statements (postgresStore's `timeoutMs`).
  const transactional: Partial<TransactionalStore> = claimsInTransaction(store)
    ? {
        claimInTransaction: (request) => store.claimInTransaction(request),
        ...(store.takeNextInTransaction ? { takeNextInTransaction: store.takeNextInTransaction.bind(store) } : {}),
      }
    : {};
  const bounded =
    <A extends unknown[], R>(what: string, call: (...args: A) => R | Promise<R>) =>
    (...args: A): Promise<R> =>
      withTimeout(
        Promise.resolve().then(() => call(...args)),
        timeoutMs,
        () => new StoreUnavailableError(`idempotency store: ${what} did not answer within ${timeoutMs} ms`),
      );
  // Every call of the lanes too: the drain's hand-on, a lane's retry and dead letter, `health()`'s held
  // lanes, and the sweep's way to a lane whose drain job the queue lost (without it, a store whose
  // receivers keep no copy of a lane's notifications would leave such a lane unfound).
  const lanes = store.lanes && boundedLanes(store.lanes, bounded);
  return {
    ...(store.leaseMs !== undefined ? { leaseMs: store.leaseMs } : {}),
    claim: bounded("claim", (request) => store.claim(request)),
    extend: bounded("extend", (claim, leaseMs) => store.extend(claim, leaseMs)),
    complete: bounded("complete", (claim, answer) => store.complete(claim, answer)),
    fail: bounded("fail", (claim, error) => store.fail(claim, error)),
    markQueued: bounded("markQueued", (claim) => store.markQueued(claim)),
    release: bounded("release", (claim) => store.release(claim)),
    get: bounded("get", (record) => store.get(record)),
    ...(lanes ? { lanes } : {}),
    ...(store.ping ? { ping: bounded("ping", () => store.ping!()) } : {}),
    ...(store.close ? { close: () => store.close!() } : {}),
    ...(store.connection ? { connection: store.connection } : {}),
    ...transactional,
  };
}

/** Each of the lanes' calls under `bounded`, named as the lanes name it (`lanes.takeNext`). */
function boundedLanes<Lanes extends LaneStore>(
  lanes: Lanes,
  bounded: (what: string, call: (...args: never[]) => unknown) => (...args: never[]) => Promise<unknown>,
): Lanes {
  const calls = DRAINED_LANE_CALLS.flatMap((name) => {
    const call = (lanes as Partial<DrainedLaneStore>)[name] as ((...args: never[]) => unknown) | undefined;
    return typeof call === "function" ? [[name, bounded(`lanes.${name}`, call.bind(lanes))]] : [];
  });
  return Object.fromEntries(calls) as Lanes;
}

/**
 * The default store: the one receivers reach with `redisStore({ connection })` on the same Redis
 * (default prefix). A lent client goes to the store as it is; a URL, options or nodes get the store's
 * fail-fast settings underneath, on a connection closed with the worker.
 */
function sharedStore(connection: RedisConnection): WorkerStore {
  const store = redisStore({ connection });
  return { store, closeStore: () => store.close() };
}
