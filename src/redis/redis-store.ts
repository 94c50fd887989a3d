import { boundsItsCalls } from "../idempotency/bounded-calls.js";
import { type ClaimFlags, claimFlags } from "../idempotency/claim-flags.js";
import { type LaneMaxLengthOption, laneMaxLengthOf } from "../idempotency/lane-store.js";
import { listedAsOf } from "../idempotency/listed-as.js";
import type {
  ClaimedOrStale,
  ClaimHandle,
  ClaimRequest,
  ClaimResult,
  DrainedLaneStore,
  HeldLanes,
  IdempotencyRecord,
  IdempotencyStore,
  KeptNotifications,
  ListPage,
  ListQuery,
  RecordRef,
  RecordState,
  StoredAnswer,
} from "../idempotency/store.js";
import { DEFAULT_LEASE_MS, DEFAULT_RETENTION_SECONDS, refOf } from "../idempotency/store.js";
import { coded, optionError } from "../shared/errors.js";
import { type KnownKeys, rejectUnknownKeys } from "../shared/option-keys.js";
import { checkRedisConnection } from "./check-connection.js";
import type { ConnectionOption } from "./connect.js";
import { connectionEvents } from "./connection-events.js";
import { DEFAULT_STORE_TIMEOUT_MS, failFastConnection, type RedisClient } from "./fail-fast-connection.js";
import { keySlot } from "./key-slot.js";
import { laneIndexKey, laneSweep } from "./lane-index.js";
import { BIND_ORDER, bindingKey, claimUnderBoundKey } from "./order-binding.js";
import { ORDERED_COMMANDS, type OrderedCommandName, orderedKeys } from "./ordered-scripts.js";
import { type StoredScript, storedScript } from "./script-command.js";
import { COMMANDS, type CommandName } from "./scripts.js";
import { isCluster, lapsedFromIndex, listedArgs, listFromIndex, timeIndexKey, withTimeIndex } from "./time-index.js";

/**
 * `connection`: a URL, ioredis options or cluster nodes (the store connects with `failFastRedisOptions`
 * and closes the connection in `close()`), or an ioredis client or cluster, used as it is and left open.
 * A lent client should have the settings of `failFastRedisOptions()`: the store bounds every call
 * itself, but a client with an offline queue or retries keeps a command that timed out and may apply
 * it later (harmless, see `scripts.ts`).
 */
export type RedisStoreOptions = RedisStoreSettings & ConnectionOption;

/** The options of `redisStore` besides its connection. */
export interface RedisStoreSettings extends LaneMaxLengthOption {
  /**
   * Prefix of each record's key, `${prefix}${id}`. Default `mw:idem:`. Each script touches one key, so
   * on Redis Cluster no hash tag (`{mw}:idem:`) is needed, and records spread over all shards. Records
   * claimed in order live at `${prefix}{orderKey}:n:${id}`, beside their key's `${prefix}{orderKey}:order`.
   */
  prefix?: string;
  /** Lease for a claim or extension that names none. Default 30 s, as the receiver's. */
  leaseMs?: number;
  /** How long a record is kept after its last change. Default 7 days. */
  retentionSeconds?: number;
  /** The longest any store call may take before it fails with `StoreUnavailableError`. Default 500 ms. */
  timeoutMs?: number;
  /**
   * Act on a write only once this many replicas hold it (Redis `WAIT`, sent in one pipeline with the
   * write, so on a cluster it goes to the record's own master). Redis replicates asynchronously: a
   * master that dies just after acknowledging a claim or a completion can take that write with it, and
   * the replica promoted in its place lets the handler run a second time. With this set, a write the
   * replicas do not confirm within `timeoutMs` (default 100 ms, below the call's own limit) fails the
   * call like an unreachable Redis: the receiver answers 503 and the sender keeps the notification; an
   * unconfirmed claim is let go at once, an unconfirmed completion is written again. Default: not waited for.
   */
  waitForReplicas?: { replicas: number; timeoutMs?: number };
  /**
   * Keep the records' time index (`time-index.ts`), written by the script that writes each record, for
   * `list` and so for the console. Default true; false saves its write (see docs/console.md for the
   * cost) and leaves the store without `list`.
   */
  timeIndex?: boolean;
}

/** The store interface, every call asynchronous (a Redis round trip). */
export interface RedisStore extends IdempotencyStore {
  readonly prefix: string;
  readonly leaseMs: number;
  claim(request: ClaimRequest): Promise<ClaimResult>;
  extend(claim: ClaimHandle, leaseMs?: number): Promise<boolean>;
  complete(claim: ClaimHandle, answer: StoredAnswer): Promise<boolean>;
  fail(claim: ClaimHandle, error: string): Promise<boolean>;
  markQueued(claim: ClaimHandle): Promise<boolean>;
  release(claim: ClaimHandle): Promise<boolean>;
  get(record: RecordRef): Promise<IdempotencyRecord | undefined>;
  /** Present unless `timeIndex: false`. */
  list?(query: ListQuery): Promise<ListPage>;
  /** Present unless `timeIndex: false`: a receiver's sweep finds lapsed claims through the kept index beside the time index. */
  readonly kept?: KeptNotifications;
  /** The lanes, kept whole in Redis (every call a round trip; see lane-store.ts). */
  readonly lanes: DrainedLaneStore;
  /** A PING within `timeoutMs`; rejects with `StoreUnavailableError` as the other calls do. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export const DEFAULT_REDIS_PREFIX = "mw:idem:";

/** The ordered scripts that touch only an order key's hash and lane, no record's. */
const ON_THE_KEY_ALONE = new Set(["mwIdemOrderedNext", "mwIdemOrderedAbandonNext"]);
/** The ordered scripts that append to a lane, and list it in the lanes index (a fifth key). */
const WITH_LANE_INDEX = new Set<string>(["mwIdemOrderedClaim", "mwIdemOrderedMarkWaiting"]);

const REDIS_STORE_KEYS = {
  connection: true,
  prefix: true,
  leaseMs: true,
  retentionSeconds: true,
  timeoutMs: true,
  laneMaxLength: true,
  waitForReplicas: true,
  timeIndex: true,
} as const satisfies KnownKeys<RedisStoreSettings & { connection: unknown }>;

type ScriptReply = [string, (string | number)?, string?, (string | number)?, string?, string?];

/**
 * A claimed or stale reply as a handle: on the record asked for, or (when the reply names one) on the
 * first waiting notification of the key's list that the script claimed instead.
 */
function claimedOf(reply: ScriptReply, asked: ClaimHandle): ClaimedOrStale {
  const [status, attempt, position, otherId, otherPosition, data] = reply;
  const handle: ClaimHandle =
    otherId === undefined
      ? asked
      : {
          id: String(otherId),
          owner: asked.owner,
          order: { key: asked.order!.key, ...(otherPosition ? { position: otherPosition } : {}) },
        };
  // A waiting notification handed over comes with the job data its receiver kept with it (see ORDERED_CLAIM).
  const carried = data ? { carried: data } : {};
  if (status === "stale")
    return { status, ...handle, attempt: Number(attempt), newestPosition: String(position), ...carried };
  return position
    ? { status: "claimed", ...handle, attempt: Number(attempt), previousPosition: position, ...carried }
    : { status: "claimed", ...handle, attempt: Number(attempt), ...carried };
}

/** Every script the store registers: the record's, the ordered ones, and the id's binding to its order key. */
type ScriptName = CommandName | OrderedCommandName | "mwIdemBindOrder";

/** The scripts of `scripts.ts` and `ordered-scripts.ts`, as `defineCommand` adds them to the client (keys, then ARGV). */
type IdempotencyCommands = {
  [name in ScriptName]: (...keysAndArgs: Array<string | number>) => Promise<ScriptReply | 0 | 1>;
};

/**
 * The idempotency store for several receiver (and worker) processes sharing one Redis: one hash per
 * notification id, changed only by the Lua scripts of `scripts.ts`, so each transition is atomic and
 * behaves exactly as `memoryStore`'s. Every call ends within `timeoutMs`; a Redis that is down, paused
 * or refusing writes makes it reject with `StoreUnavailableError`, which the receiver answers with 503.
 */
export function redisStore(options: RedisStoreOptions): RedisStore {
  rejectUnknownKeys("redisStore", options, Object.keys(REDIS_STORE_KEYS));
  checkRedisConnection(options?.connection, { what: "redisStore", options: true });
  const prefix = options.prefix ?? DEFAULT_REDIS_PREFIX;
  const leaseMs = positive("leaseMs", options.leaseMs ?? DEFAULT_LEASE_MS);
  const laneMaxLength = positive("laneMaxLength", laneMaxLengthOf(options));
  const retentionMs = Math.round(
    positive("retentionSeconds", options.retentionSeconds ?? DEFAULT_RETENTION_SECONDS) * 1000,
  );
  const timeoutMs = positive("timeoutMs", options.timeoutMs ?? DEFAULT_STORE_TIMEOUT_MS);
  const replicated = replicaWait(options.waitForReplicas, timeoutMs);
  const connection = failFastConnection(options.connection, timeoutMs);
  const events = connectionEvents(connection.client, "redisStore");
  const indexed = options.timeIndex !== false;
  const scripts = defineScripts(connection.client, indexed);
  const cluster = isCluster(connection.client);
  /** On one Redis, every record's index is the same key. */
  const soleIndex = timeIndexKey(prefix, prefix, false);
  /** The keys a record's script gets: with the time index, its index after the script's own. */
  const withIndex = (keys: string[]) => {
    if (indexed) keys.push(cluster ? timeIndexKey(prefix, keys[0]!, true) : soleIndex);
    return keys;
  };
  /** Send a script: with `waitForReplicas` in a pipeline ending in `WAIT`, else as a command of its own. */
  const send = (what: string, name: ScriptName, keysAndArgs: Array<string | number>, afterFailure?: () => void) =>
    replicated
      ? connection.run(what, (client) => replicated(client, name, keysAndArgs), afterFailure)
      : connection.runScript(what, scripts[name], keysAndArgs, afterFailure);

  const key = (id: string) => prefix + id;
  /** The order keys whose lane a dead letter held, by when (see `lanes.fail` and `heldLanes`). */
  const heldLanesKey = `${prefix}held-lanes`;
  /** Run the record's script: the ordered variant, on the record's and its order key's keys, when it has an order key. */
  const script = (
    name: CommandName,
    id: string,
    orderKey: string | undefined,
    args: Array<string | number>,
    afterFailure?: () => void,
  ) => {
    if (orderKey === undefined) return send(WHAT[name], name, [...withIndex([key(id)]), ...args], afterFailure);
    const keys = orderedKeys(prefix, orderKey, id);
    const ordered = `mwIdemOrdered${name.slice("mwIdem".length)}` as OrderedCommandName;
    const laneKeys = [keys.record, keys.order, keys.waiting, keys.carried];
    // An append lists its lane for the sweep (see `lane-index.ts`), in the same script.
    if (WITH_LANE_INDEX.has(ordered)) laneKeys.push(laneIndexKey(prefix, keys.order, cluster));
    return send(WHAT[name], ordered, [...withIndex(laneKeys), ...args], afterFailure);
  };
  const changed = async (name: CommandName, claim: ClaimHandle, args: Array<string | number>) =>
    (await script(name, claim.id, claim.order?.key, [claim.owner, ...args])) === 1;

  /**
   * A claim whose answer never arrived may still apply when the command reaches Redis, leaving a
   * processing record nobody works on: redeliveries would meet 409 until its lease ran out. Ending the
   * lease at once under the same owner token (sent after the claim on the same connection, so it
   * applies after it) lets the next delivery take over immediately. It can touch only this claim.
   */
  const abandon = (id: string, owner: string, orderKey: string | undefined) => {
    script("mwIdemExtend", id, orderKey, [owner, 0, retentionMs]).catch(() => {});
  };

  /**
   * The answer for a claim of `id` under `orderKey` when the id is bound to another order key (see
   * `order-binding.ts`); undefined when the claim may go ahead under its own key.
   */
  const boundElsewhere = async (
    id: string,
    fingerprint: string,
    orderKey: string,
    lease: number,
  ): Promise<ClaimResult | undefined> => {
    // Replicated as a claim is (`waitForReplicas`): a binding a failover lost would let the id run again.
    const bind = async (movedFrom: string) =>
      (await send("bind order", "mwIdemBindOrder", [bindingKey(prefix, id), orderKey, retentionMs, movedFrom])) as
        | []
        | [string, number];
    const other = await bind("");
    if (other.length === 0) return undefined;
    const [boundKey, boundForMs] = other;
    const record = recordOf(
      await connection.run("get", (client) => client.hgetall(orderedKeys(prefix, boundKey, id).record)),
    );
    const answer = claimUnderBoundKey(record, fingerprint, Number(boundForMs), lease);
    if (answer) return answer;
    // Its record there can be taken over: the id moves here, unless another claim moved it first.
    return (await bind(boundKey)).length === 0 ? undefined : { status: "processing", retryAfterMs: 50 };
  };

  /**
   * A claim. A worker's claim in order (`unbound`) goes without the id's binding to its order key,
   * sent first only when the script asks for it: a record waiting in its lane cannot have moved.
   */
  async function claimRecord(request: ClaimFlags, bound: boolean): Promise<ClaimResult> {
    const { id, fingerprint, owner, takeQueued, order, handoffFrom = "" } = request;
    const lease = request.leaseMs ?? leaseMs;
    const unbound = order !== undefined && takeQueued === true && !request.forQueue && !bound;
    if (order && !unbound) {
      const elsewhere = await boundElsewhere(id, fingerprint, order.key, lease);
      if (elsewhere) return elsewhere;
    }
    const args: Array<string | number> = [fingerprint, owner, lease, takeQueued ? "1" : "0", retentionMs];
    if (order) {
      const mode = request.forQueue ? "queue" : takeQueued ? "worker" : "direct";
      const { recordPrefix } = orderedKeys(prefix, order.key, id);
      args.push(order.position ?? "", id, mode, handoffFrom, recordPrefix, laneMaxLength);
      if (mode === "queue") args.push(request.carried ?? "", order.onDeadLetter ?? "");
      else if (unbound) args.push("", "", "1");
    } else {
      args.push(handoffFrom);
      const toQueue = request.queueAtClaim && request.forQueue;
      // An in-process queue's data, kept in the claim's own script (`RunClaim.carried`), with the index.
      const carried = indexed && !request.forQueue ? request.carried : undefined;
      if (toQueue || request.attempt !== undefined || carried !== undefined) args.push(toQueue ? "1" : "0");
      if (request.attempt !== undefined || carried !== undefined) args.push(request.attempt ?? "");
      if (carried !== undefined) args.push(carried);
    }
    // The index's own two, last (its wrapper takes them off before the claim's script runs).
    if (indexed) args.push(...listedArgs(listedAsOf(request)));
    const reply = (await script("mwIdemClaim", id, order?.key, args, () => abandon(id, owner, order?.key))) as
      | ScriptReply
      | number;
    // A fresh claim answers its attempt alone (see CLAIM).
    if (typeof reply === "number") return { status: "claimed", id, owner, attempt: reply };
    const [status, value, position, wake] = reply;
    switch (status) {
      case "bind":
        return claimRecord(request, true);
      case "waiting":
        // Kept with its data and handed over in the claim: no `lanes.append` follows.
        return {
          ...claimedOf(["claimed", value, position], { id, owner, order: order! }),
          appended: { wake: Number(wake) === 1 },
        } as ClaimResult;
      case "queued_at_claim":
        // Written queued under a hand-off lease: no `markQueued` follows the job's add.
        return { status: "claimed", id, owner, attempt: Number(value), queued: true };
      case "kept":
        // Its data kept with it (and listed in the kept index) by the claim: no `kept.keep` follows.
        return { status: "claimed", id, owner, attempt: Number(value), kept: true };
      case "claimed":
      case "stale":
        return claimedOf(reply, { id, owner, ...(order ? { order } : {}) });
      case "processing":
        if (position === "full") return { status, retryAfterMs: Number(value), key: true, full: true };
        return position === "key"
          ? { status, retryAfterMs: Number(value), key: true }
          : { status, retryAfterMs: Number(value) };
      case "completed":
        return { status, answer: JSON.parse(String(value)) as StoredAnswer };
      case "queued":
        return value === "lane" ? { status, inLane: true } : { status };
      case "conflict":
        return { status };
      default:
        throw coded(new Error(`unexpected claim reply from Redis: ${String(status)}`), "MW_INTERNAL");
    }
  }

  // The lanes, kept whole in Redis: one drain job runs each (see lane-store.ts).
  const lanes: DrainedLaneStore = {
    async append(claim, lease = leaseMs) {
      const keys = orderedKeys(prefix, claim.order!.key, claim.id);
      const [marked, wake] = (await send("mark waiting", "mwIdemOrderedMarkWaiting", [
        ...withIndex([keys.record, keys.order, keys.waiting, keys.carried, laneIndexKey(prefix, keys.order, cluster)]),
        claim.owner,
        retentionMs,
        lease,
      ])) as [number, number];
      return { queued: marked === 1, wake: wake === 1 };
    },

    async running(order) {
      const keys = orderedKeys(prefix, order.key, "");
      const [owner, leaseUntil, retryUntil] = await connection.run("lane running", (client) =>
        client.hmget(keys.order, "owner", "leaseUntil", "retryUntil"),
      );
      // Compared with this clock, not the server's: a skew only makes the sweep look again next time.
      const now = Date.now();
      if ((owner !== null && Number(leaseUntil) > now) || Number(retryUntil) > now) return true;
      // Held by a dead letter, the lane waits for a person: nothing to queue for it meanwhile.
      return (await lanes.heldBy(order)) !== undefined;
    },

    async fail(claim, error) {
      const keys = orderedKeys(prefix, claim.order!.key, claim.id);
      const reply = await send("fail in lane", "mwIdemOrderedFailInLane", [
        ...withIndex([keys.record, keys.order, keys.waiting, keys.carried]),
        claim.owner,
        error,
        retentionMs,
        claim.id,
      ]);
      if (reply !== 2) return reply === 1;
      // Noted for `heldLanes`, after the script (which reaches only its own key's slot on a cluster). Lost
      // here, the lane is held all the same; it is only missing from health() until held again.
      await connection
        .run("held lanes", (client) => client.zadd(heldLanesKey, Date.now(), claim.order!.key))
        .catch(() => {});
      return "held";
    },

    async heldLanes() {
      // Each noted lane is checked, and those no longer held (redriven, discarded) are dropped from the note.
      const noted = await connection.run("held lanes", (client) => client.zrange(heldLanesKey, 0, -1, "WITHSCORES"));
      const held: HeldLanes = { count: 0 };
      for (let i = 0; i < noted.length; i += 2) {
        const key = noted[i]!;
        const id = await lanes.heldBy({ key });
        if (id === undefined) {
          await connection.run("held lanes", (client) => client.zrem(heldLanesKey, key));
          continue;
        }
        held.count++;
        held.oldest ??= { key, id, since: Number(noted[i + 1]) };
      }
      return held;
    },

    async heldBy(order) {
      const keys = orderedKeys(prefix, order.key, "");
      const [head] = await connection.run("held by", (client) => client.zrange(keys.waiting, 0, 0));
      if (head === undefined) return undefined;
      const id = head.slice(head.indexOf("\n") + 1);
      const [state, waiting] = await connection.run("held by", (client) =>
        client.hmget(keys.recordPrefix + id, "state", "waiting"),
      );
      return state === "failed" && waiting === head ? id : undefined;
    },

    async retry(claim, error, delayMs) {
      const keys = orderedKeys(prefix, claim.order!.key, claim.id);
      const reply = await send("retry in lane", "mwIdemOrderedRetry", [
        ...withIndex([keys.record, keys.order, keys.waiting, keys.carried]),
        claim.owner,
        error,
        retentionMs,
        Math.max(0, Math.round(delayMs)),
        leaseMs,
        claim.id,
      ]);
      return reply === 1;
    },

    async takeNext(order, owner, lease = leaseMs) {
      const keys = orderedKeys(prefix, order.key, "");
      // As for a claim: a hand-over whose answer was lost is undone, else the key waits a lease.
      const abandonNext = () => {
        connection
          .runScript("abandon next", scripts.mwIdemOrderedAbandonNext, [
            ...withIndex([keys.order, keys.waiting, keys.carried]),
            owner,
            keys.recordPrefix,
          ])
          .catch(() => {});
      };
      const reply = (await send(
        "take next",
        "mwIdemOrderedNext",
        [...withIndex([keys.order, keys.waiting, keys.carried]), owner, lease, retentionMs, keys.recordPrefix],
        abandonNext,
      )) as ScriptReply | [];
      return reply.length === 0
        ? undefined
        : claimedOf(reply as ScriptReply, { id: "", owner, order: { key: order.key } });
    },

    async completeAndTakeNext(claim, answer, next) {
      if (claim.order === undefined) return { completed: await store.complete(claim, answer) };
      const keys = orderedKeys(prefix, claim.order.key, claim.id);
      // As for a take-next: a hand-over whose answer was lost is undone, else the key waits a lease.
      // The completion itself is the caller's to send again (`retryCompletion`), as for `complete`.
      const abandonNext = () => {
        connection
          .runScript("abandon next", scripts.mwIdemOrderedAbandonNext, [
            ...withIndex([keys.order, keys.waiting, keys.carried]),
            next.owner,
            keys.recordPrefix,
          ])
          .catch(() => {});
      };
      const reply = (await send(
        "complete",
        "mwIdemOrderedCompleteNext",
        [
          ...withIndex([keys.record, keys.order, keys.waiting, keys.carried]),
          claim.owner,
          JSON.stringify(answer),
          retentionMs,
          next.owner,
          next.leaseMs,
          keys.recordPrefix,
        ],
        abandonNext,
      )) as ScriptReply | 0 | 1;
      if (typeof reply === "number") return { completed: reply === 1 };
      return {
        completed: true,
        next: claimedOf(reply, { id: "", owner: next.owner, order: { key: claim.order.key } }),
      };
    },

    ...laneSweep(connection, prefix, retentionMs),

    async waiting(order) {
      const keys = orderedKeys(prefix, order.key, "");
      return (await connection.run("lane waiting", (client) => client.zcard(keys.waiting))) > 0;
    },
  };

  // An in-process queue's notifications, kept in their records' hashes (see kept-notifications.ts).
  const kept: KeptNotifications = {
    keep: (claim, data) => changed("mwIdemKeep", claim, [data]),
    // Read along the kept index (`keptIndexKey`): the lapsed ones alone, however many records process.
    async lapsed(limit) {
      await connection.run("kept lapsed", async () => undefined);
      return lapsedFromIndex(connection.client, prefix, limit);
    },
    async resume(id, owner, lease) {
      const reply = await send("resume", "mwIdemResume", [...withIndex([key(id)]), owner, lease]);
      if (!Array.isArray(reply)) return undefined;
      return { claim: { id, owner }, attempt: Number(reply[0]), carried: String(reply[1]) };
    },
    rerun: async (id, owner) => (await script("mwIdemRerun", id, undefined, [owner, retentionMs])) === 1,
    // What rerun-1.lua checks, read alone: the record's hash expires with its retention, as the script keeps it.
    async redrivable(id) {
      const [state, carried] = await connection.run("kept redrivable", (client) =>
        client.hmget(key(id), "state", "carried"),
      );
      return state === "failed" && carried !== null;
    },
  };

  const store: RedisStore = {
    prefix,
    leaseMs,

    // Sent as the flags the scripts take (their wire format, shared with running deployments).
    claim: (request: ClaimRequest) => claimRecord(claimFlags(request), false),

    extend: (claim, lease = leaseMs) => changed("mwIdemExtend", claim, [lease, retentionMs]),
    complete: (claim, answer) => changed("mwIdemComplete", claim, [JSON.stringify(answer), retentionMs]),
    fail: (claim, error) => changed("mwIdemFail", claim, [error, retentionMs]),
    markQueued: (claim) => changed("mwIdemMarkQueued", claim, [retentionMs]),
    release: (claim) => changed("mwIdemRelease", claim, []),
    lanes,
    // Found again through the kept index the time index's wrapper writes (a receiver's sweep), so kept only with it.
    ...(indexed ? { kept } : {}),

    async get(record) {
      const { id, key: orderKey } = refOf(record);
      const at = orderKey === undefined ? key(id) : orderedKeys(prefix, orderKey, id).record;
      return recordOf(await connection.run("get", (client) => client.hgetall(at)));
    },

    ...(indexed
      ? {
          // Not under the store's call limit (kept short for the receive path): a page reads many keys,
          // each command still bounded by the connection's own command timeout.
          async list(query: ListQuery) {
            // Connected (or unavailable) within the call limit first, as every store call is.
            await connection.run("list", async () => undefined);
            return listFromIndex(
              connection.client,
              prefix,
              query,
              recordOf,
              (orderKey) => orderedKeys(prefix, orderKey, "").recordPrefix,
            );
          },
        }
      : {}),

    async ping() {
      await connection.run("ping", (client) => client.ping());
    },

    connection: events,

    close: () => connection.close(),
  };
  // Every call but `list` goes through `connection.run`/`runScript`, which end it within `timeoutMs`.
  return boundsItsCalls(store, timeoutMs);
}

/**
 * The store's scripts, each also registered on the client (for the pipelines of `waitForReplicas`);
 * with the time index, each record-writing script also writes the index, which it gets as one more key.
 */
function defineScripts(client: RedisClient, indexed: boolean): Record<ScriptName, StoredScript> {
  const scripts = {} as Record<ScriptName, StoredScript>;
  const define = (name: ScriptName, lua: string, numberOfKeys: number) => {
    scripts[name] = storedScript(name, lua, numberOfKeys);
    client.defineCommand(name, { lua, numberOfKeys });
  };
  // Every record script gets the index key as its last KEY (those that change no record leave it be).
  const defineRecordScript = (name: ScriptName, lua: string, numberOfKeys: number) =>
    indexed ? define(name, withTimeIndex(name, lua), numberOfKeys + 1) : define(name, lua, numberOfKeys);
  for (const [name, lua] of Object.entries(COMMANDS)) defineRecordScript(name as CommandName, lua, 1);
  // An id's binding to its subscription is no record of its own: no index.
  define("mwIdemBindOrder", BIND_ORDER, 1);
  for (const [name, lua] of Object.entries(ORDERED_COMMANDS))
    defineRecordScript(
      name as OrderedCommandName,
      lua,
      ON_THE_KEY_ALONE.has(name) ? 3 : WITH_LANE_INDEX.has(name) ? 5 : 4,
    );
  return scripts;
}

/** What each record script is called in an error message ("claim", "complete", ...). */
const WHAT = Object.fromEntries(
  Object.keys(COMMANDS).map((name) => [name, name.slice("mwIdem".length).toLowerCase()]),
) as Record<CommandName, string>;

type ScriptCall = (
  client: RedisClient,
  command: ScriptName,
  keysAndArgs: Array<string | number>,
) => Promise<ScriptReply | 0 | 1>;

/**
 * With `waitForReplicas`, how a script is sent: in a pipeline ending in a `WAIT`, whose
 * count of replicas holding the writes must reach the one asked for. `WAIT` holds its connection until
 * the replicas answer, so one per write would space a store's writes a replica round trip apart: the
 * writes asked for in the same tick that go to the same node share one pipeline and one `WAIT`.
 */
function replicaWait(wanted: RedisStoreSettings["waitForReplicas"], callTimeoutMs: number): ScriptCall | undefined {
  if (wanted === undefined) return undefined;
  const { replicas } = wanted;
  if (!Number.isInteger(replicas) || replicas < 1)
    throw optionError(
      new RangeError(`waitForReplicas.replicas must be a whole number of replicas, 1 or more; got ${replicas}`),
      "MW_INVALID_OPTION",
      "waitForReplicas.replicas",
    );
  const waitMs = wanted.timeoutMs ?? Math.min(DEFAULT_REPLICA_WAIT_MS, Math.floor(callTimeoutMs / 2));
  if (!Number.isInteger(waitMs) || waitMs < 1 || waitMs >= callTimeoutMs)
    throw optionError(
      new RangeError(
        `waitForReplicas.timeoutMs must be a whole number of milliseconds from 1 to below the store's timeoutMs (${callTimeoutMs}); got ${waitMs}`,
      ),
      "MW_INVALID_TIMEOUT",
      "waitForReplicas.timeoutMs",
    );

  const batches = new Map<string, WaitBatch>();
  const flush = () => {
    const due = [...batches.values()];
    batches.clear();
    for (const batch of due) void sendBatch(batch, replicas, waitMs);
  };
  return (client, command, keysAndArgs) =>
    new Promise((resolve, reject) => {
      const group = nodeGroup(client, String(keysAndArgs[0]));
      let batch = batches.get(group);
      if (!batch) {
        if (batches.size === 0) queueMicrotask(flush);
        batch = { client, calls: [] };
        batches.set(group, batch);
      }
      batch.calls.push({ command, keysAndArgs, resolve, reject });
    });
}

interface WaitBatch {
  client: RedisClient;
  calls: Array<{
    command: ScriptName;
    keysAndArgs: Array<string | number>;
    resolve: (reply: ScriptReply | 0 | 1) => void;
    reject: (err: unknown) => void;
  }>;
}

/** The node a key's write goes to: one group on a single Redis, the slot's master on a cluster. */
function nodeGroup(client: RedisClient, key: string): string {
  const slots = (client as { slots?: string[][] }).slots;
  if (!Array.isArray(slots)) return "";
  const slot = keySlot(key);
  return slots[slot]?.[0] ?? `slot ${slot}`;
}

async function sendBatch(batch: WaitBatch, replicas: number, waitMs: number): Promise<void> {
  const { calls } = batch;
  try {
    const pipeline = batch.client.pipeline() as unknown as IdempotencyCommands & {
      wait(replicas: number, timeoutMs: number): unknown;
      exec(): Promise<Array<[Error | null, unknown]> | null>;
    };
    for (const call of calls) pipeline[call.command](...call.keysAndArgs);
    pipeline.wait(replicas, waitMs);
    const results = (await pipeline.exec()) ?? [];
    const waited = results[calls.length];
    if (!waited) throw new Error("the pipeline was discarded");
    if (waited[0]) throw waited[0];
    const held = Number(waited[1]);
    const shortfall =
      held < replicas ? new Error(`written to ${held} of ${replicas} replicas within ${waitMs} ms`) : undefined;
    calls.forEach((call, i) => {
      const [err, reply] = results[i] ?? [new Error("the pipeline was discarded"), undefined];
      if (err) call.reject(err);
      else if (shortfall) call.reject(shortfall);
      else call.resolve(reply as ScriptReply | 0 | 1);
    });
  } catch (err) {
    for (const call of calls) call.reject(err);
  }
}

/** How long a write waits for its replicas unless told: a healthy replica confirms in about a millisecond. */
const DEFAULT_REPLICA_WAIT_MS = 100;

/** The record a hash holds, shaped as `memoryStore` returns it (absent fields left out). */
function recordOf(hash: Record<string, string>): IdempotencyRecord | undefined {
  if (!hash.state) return undefined;
  const record: IdempotencyRecord = {
    state: hash.state as RecordState,
    fingerprint: hash.fingerprint ?? "",
    attempts: Number(hash.attempts ?? 0),
  };
  if (hash.owner !== undefined) record.owner = hash.owner;
  if (hash.leaseUntil !== undefined) record.leaseUntil = Number(hash.leaseUntil);
  if (hash.answer !== undefined) record.answer = JSON.parse(hash.answer) as StoredAnswer;
  if (hash.error !== undefined) record.error = hash.error;
  return record;
}

function positive(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0)
    throw optionError(new RangeError(`${name} must be a positive number, got ${value}`), "MW_INVALID_TIMEOUT", name);
  return value;
}
