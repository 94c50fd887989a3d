import type { HeldLanes, IdempotencyStore } from "../idempotency/store.js";
import type { NotificationQueue } from "../queue/queue.js";
import { withTimeout } from "../shared/time-limit.js";

/** `up` answered the ping; `down` failed it or missed the time-out; `unknown` has no ping; `none` is not configured. */
export type HealthState = "up" | "down" | "unknown" | "none";

/** `ok` is false when the store or the queue is down: every notification would be answered 503. */
export interface ReceiverHealth {
  ok: boolean;
  store: Exclude<HealthState, "none">;
  queue: HealthState;
  /** While the store is down: since when (ISO 8601), as far as this process has seen. */
  storeDownSince?: string;
  /** Where the store connects (`host:port`, or the cluster's nodes), when it says; never a password. */
  storeAddress?: string;
  /**
   * Notifications in flight now (past intake, not yet answered), and the `backpressure.maxInFlight`
   * past which they are shed with 503 "overloaded". A busy receiver is not a down one: `ok` ignores both.
   */
  inFlight: number;
  maxInFlight: number;
  /**
   * With an in-process queue: whether notifications answered `processed: true` survive this process
   * (true on a store that keeps them: another receiver on the store runs them; false on `memoryStore`:
   * they are lost if the process dies). Absent with a durable queue, which keeps them by being one. Not in `ok`.
   */
  acceptedKept?: boolean;
  /**
   * Lanes held by a dead letter (`ordering.onDeadLetter: "hold"`), when the store can count them: the
   * notifications behind each wait, kept, until a person redrives or discards it. Not in `ok`: the
   * process still takes and runs everything else, and taking it out of a load balancer would free no lane.
   * Absent without ordering (a receiver without `ordering` runs no lanes), or when the store cannot say
   * (or did not within the time-out).
   */
  heldLanes?: number;
  /** The lane held longest: its order key, the dead letter holding it, and since when (ISO 8601). */
  oldestHeldLane?: { key: string; id: string; since: string };
}

export interface HealthOptions {
  /** Longest either ping may take before it counts as down. Default 500 ms. */
  timeoutMs?: number;
}

export const DEFAULT_HEALTH_TIMEOUT_MS = 500;

/**
 * Ping the store and the queue at once, each within the time-out, so a load balancer's health check
 * gets its answer well inside its own limit even when Redis hangs rather than refuses.
 */
export async function checkHealth(
  store: IdempotencyStore,
  queue: Pick<NotificationQueue, "ping"> | undefined,
  options: HealthOptions = {},
  load: { inFlight: () => number; maxInFlight: number },
  /**
   * `lanes`: whether the caller runs ordered lanes (a receiver with `ordering`, a worker): then held
   * lanes are counted. `kept`: with a queue that is not durable, whether what it accepted survives the process (`acceptedKept`).
   */
  { lanes = false, kept }: { lanes?: boolean; kept?: boolean | undefined } = {},
): Promise<ReceiverHealth> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_HEALTH_TIMEOUT_MS;
  const [storeState, queueState, held] = await Promise.all([
    store.ping ? stateOf(() => store.ping!(), timeoutMs) : ("unknown" as const),
    !queue ? ("none" as const) : queue.ping ? stateOf(() => queue.ping!(), timeoutMs) : ("unknown" as const),
    lanes ? heldLanesOf(store, timeoutMs) : undefined,
  ]);
  const health: ReceiverHealth = {
    ok: storeState !== "down" && queueState !== "down",
    store: storeState,
    queue: queueState,
    inFlight: load.inFlight(),
    maxInFlight: load.maxInFlight,
  };
  if (store.connection) health.storeAddress = store.connection.address;
  if (kept !== undefined) health.acceptedKept = kept;
  if (held) health.heldLanes = held.count;
  if (held?.oldest)
    health.oldestHeldLane = {
      key: held.oldest.key,
      id: held.oldest.id,
      since: new Date(held.oldest.since).toISOString(),
    };
  const since = downSince(store, storeState);
  if (since !== undefined) health.storeDownSince = new Date(since).toISOString();
  return health;
}

/** First failed ping of the current outage, per store; the connection's own record wins when earlier. */
const failingSince = new WeakMap<IdempotencyStore, number>();

function downSince(store: IdempotencyStore, state: HealthState): number | undefined {
  if (state !== "down") {
    failingSince.delete(store);
    return undefined;
  }
  const connection = store.connection?.state();
  const seen = failingSince.get(store) ?? Date.now();
  failingSince.set(store, seen);
  return connection?.state === "down" ? Math.min(connection.since, seen) : seen;
}

/** `up` when `ping` resolves within `timeoutMs`; `down` when it rejects, throws or is late. */
async function stateOf(ping: () => unknown, timeoutMs: number): Promise<"up" | "down"> {
  const answered = Promise.resolve().then(ping);
  return withTimeout(answered, timeoutMs, () => new Error("ping late")).then(
    () => "up" as const,
    () => "down" as const,
  );
}

/** The store's held lanes within `timeoutMs`; undefined when it cannot count them, fails or is late. */
async function heldLanesOf(store: IdempotencyStore, timeoutMs: number): Promise<HeldLanes | undefined> {
  const lanes = store.lanes;
  if (!lanes) return undefined;
  const asked = Promise.resolve().then(() => lanes.heldLanes());
  return withTimeout(asked, timeoutMs, () => new Error("held lanes late")).catch(() => undefined);
}
