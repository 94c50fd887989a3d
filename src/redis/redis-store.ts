import { DEFAULT_LEASE_MS, DEFAULT_RETENTION_SECONDS } from "../idempotency/store.js";
import type { ClaimRequest, ClaimResult, IdempotencyRecord, IdempotencyStore, RecordState, StoredAnswer } from "../idempotency/store.js";
import { DEFAULT_STORE_TIMEOUT_MS, failFastConnection, type RedisClient } from "./connection.js";
import { COMMANDS, type CommandName } from "./scripts.js";

export interface RedisStoreOptions {
  /**
   * A URL (the store connects with `failFastRedisOptions` and closes the connection in `close()`), or
   * an ioredis client or cluster, used as it is and left open. A lent client should have the settings
   * of `failFastRedisOptions()`: the store bounds every call itself, but a client with an offline queue
   * or retries keeps a command that timed out and may apply it later (harmless, see `scripts.ts`).
   */
  redis: RedisClient | string;
  /**
   * Prefix of each record's key, `${prefix}${id}`. Default `mw:idem:`. Each script touches one key, so
   * on Redis Cluster no hash tag (`{mw}:idem:`) is needed, and records spread over all shards.
   */
  prefix?: string;
  /** Lease for a claim or extension that names none. Default 30 s, as the receiver's. */
  leaseMs?: number;
  /** How long a record is kept after its last change. Default 7 days. */
  retentionSeconds?: number;
  /** The longest any store call may take before it fails with `StoreUnavailableError`. Default 500 ms. */
  timeoutMs?: number;
}

/** The store interface, every call asynchronous (a Redis round trip). */
export interface RedisStore extends IdempotencyStore {
  readonly prefix: string;
  readonly leaseMs: number;
  claim(request: ClaimRequest): Promise<ClaimResult>;
  extend(id: string, owner: string, leaseMs?: number): Promise<boolean>;
  complete(id: string, owner: string, answer: StoredAnswer): Promise<boolean>;
  fail(id: string, owner: string, error: string): Promise<boolean>;
  markQueued(id: string, owner: string): Promise<boolean>;
  release(id: string, owner: string): Promise<boolean>;
  get(id: string): Promise<IdempotencyRecord | undefined>;
  close(): Promise<void>;
}

export const DEFAULT_REDIS_PREFIX = "mw:idem:";

type ScriptReply = [string, (string | number)?];

/** The scripts of `scripts.ts`, as `defineCommand` adds them to the client (one key, then ARGV). */
type IdempotencyCommands = {
  [name in CommandName]: (key: string, ...args: Array<string | number>) => Promise<name extends "mwIdemClaim" ? ScriptReply : 0 | 1>;
};

/**
 * The idempotency store for several receiver (and worker) processes sharing one Redis: one hash per
 * notification id, changed only by the Lua scripts of `scripts.ts`, so each transition is atomic and
 * behaves exactly as `memoryStore`'s. Every call ends within `timeoutMs`; a Redis that is down, paused
 * or refusing writes makes it reject with `StoreUnavailableError`, which the receiver answers with 503.
 */
export function redisStore(options: RedisStoreOptions): RedisStore {
  const prefix = options.prefix ?? DEFAULT_REDIS_PREFIX;
  const leaseMs = positive("leaseMs", options.leaseMs ?? DEFAULT_LEASE_MS);
  const retentionMs = Math.round(positive("retentionSeconds", options.retentionSeconds ?? DEFAULT_RETENTION_SECONDS) * 1000);
  const connection = failFastConnection(options.redis, positive("timeoutMs", options.timeoutMs ?? DEFAULT_STORE_TIMEOUT_MS));
  for (const [name, lua] of Object.entries(COMMANDS)) connection.client.defineCommand(name, { lua, numberOfKeys: 1 });

  const key = (id: string) => prefix + id;
  const script = <N extends CommandName>(name: N, id: string, args: Array<string | number>, afterFailure?: () => void) => {
    const what = name.slice("mwIdem".length).toLowerCase();
    return connection.run(what, (client) => (client as unknown as IdempotencyCommands)[name](key(id), ...args), afterFailure);
  };
  const changed = async (name: CommandName, id: string, args: Array<string | number>) => (await script(name, id, args)) === 1;

  /**
   * A claim whose answer never arrived may still apply when the command reaches Redis, leaving a
   * processing record nobody works on: redeliveries would meet 409 until its lease ran out. Ending the
   * lease at once under the same owner token (sent after the claim on the same connection, so it
   * applies after it) lets the next delivery take over immediately. It can touch only this claim.
   */
  const abandon = (id: string, owner: string) => {
    script("mwIdemExtend", id, [owner, 0, retentionMs]).catch(() => {});
  };

  return {
    prefix,
    leaseMs,

    async claim({ id, fingerprint, owner, leaseMs: requested, takeQueued }: ClaimRequest): Promise<ClaimResult> {
      const lease = requested ?? leaseMs;
      const [status, value] = (await script(
        "mwIdemClaim",
        id,
        [fingerprint, owner, lease, takeQueued ? "1" : "0", retentionMs],
        () => abandon(id, owner),
      )) as ScriptReply;
      switch (status) {
        case "claimed":
          return { status, attempt: Number(value) };
        case "processing":
          return { status, retryAfterMs: Number(value) };
        case "completed":
          return { status, answer: JSON.parse(String(value)) as StoredAnswer };
        case "queued":
        case "conflict":
          return { status };
        default:
          throw new Error(`unexpected claim reply from Redis: ${String(status)}`);
      }
    },

    extend: (id, owner, lease = leaseMs) => changed("mwIdemExtend", id, [owner, lease, retentionMs]),
    complete: (id, owner, answer) => changed("mwIdemComplete", id, [owner, JSON.stringify(answer), retentionMs]),
    fail: (id, owner, error) => changed("mwIdemFail", id, [owner, error, retentionMs]),
    markQueued: (id, owner) => changed("mwIdemMarkQueued", id, [owner, retentionMs]),
    release: (id, owner) => changed("mwIdemRelease", id, [owner]),

    async get(id) {
      return recordOf(await connection.run("get", (client) => client.hgetall(key(id))));
    },

    close: () => connection.close(),
  };
}

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
  if (!Number.isFinite(value) || value <= 0) throw new RangeError(`${name} must be a positive number, got ${value}`);
  return value;
}
