import type { Cluster } from "ioredis";
import {
  type ListedAs,
  type ListedRecord,
  type ListPage,
  type ListQuery,
  listCursor,
  matchesListQuery,
} from "../idempotency/store.js";
import type { RedisClient } from "./fail-fast-connection.js";
import { keySlot } from "./key-slot.js";

/**
 * The records' time index, for `redisStore`'s `list` (the console): a sorted set of record keys scored
 * by the epoch ms of their last change, written by the same Lua script that writes the record, so the
 * two never disagree, and trimmed to the store's retention now and then (the index itself expires
 * after its last record, by at most an eighth of the retention more).
 *
 * Beside it, one sorted set per filter value, scored alike: a record is in its state's
 * (`…:state:failed`), its event type's (`…:type:SUBSCRIPTION_RENEW`) and its subscription's
 * (`…:sub:I-BW452GLLEP1G`), the event type and subscription being those its claim told (`ListedAs`,
 * kept in its hash). The same script moves it from one state's set to another's, so a filtered page
 * reads along its filter's set and costs what it returns, not the store's size. A record that expires
 * stays in the sets until a later write there trims them past retention (a page skips it meanwhile,
 * since its hash is gone); one released (deleted) leaves them at once.
 *
 * A script may touch only keys of its record's hash slot (Redis Cluster), so on a cluster there is one
 * index per slot, `${prefix}{tag}:time-index`, where `tag` hashes to the slot of the record's key; on
 * one Redis there is one index, `${prefix}{all}:time-index`. The filters' sets share the index's tag
 * (`${prefix}{tag}:state:failed`), so they live in the record's slot too. The keys sit under the
 * store's prefix, as the order keys do, so whatever clears a prefix clears them too.
 */

/** Which record a script's reply says it changed, and which ARGV holds the retention (for the trim). */
interface Touch {
  /**
   * Whether the script may change what the kept index (`KEPT_SUFFIX`) lists KEYS[1] by: 'changed' when
   * its reply says it changed the record, 'always' (RESUME, which also drops a member whose record no
   * longer keeps data or is gone). The index holds the processing records that keep data, by lease.
   */
  kept?: "changed" | "always";
  /**
   * 'own': KEYS[1] when the reply is 1 (or an attempt, a claim's), a table starting with 1 (a lane append) or a claim (one kept with its data answers 'waiting', one queued at claim 'queued_at_claim'); 'next': only the waiting notification a take-next claimed;
   * 'release': KEYS[1] leaves the index when the script deleted it.
   */
  record: "own" | "next" | "release" | "none";
  retentionArg?: number;
  /** The ARGV holding the record key prefix of a waiting notification claimed instead of the record asked for. */
  lanePrefixArg?: number;
  /** A claim: its last two ARGV are the event type and subscription it tells ('' for none), the index's own. */
  listed?: true;
  /**
   * The state KEYS[1] was listed under before a change the reply reports: 'before' for the state read
   * before the script ran, or the one state the script changes a record from. Only for a record that
   * no script changes unlisted (a record of its own, not a lane's, whose waiting notifications other scripts move):
   * it then sits in that state's set alone, and leaving that one set is enough. Without it (and for a
   * record absent before: it may have expired listed elsewhere), the record leaves every other state's set.
   */
  listedBefore?: "before" | "processing";
}

/** The scripts that change a record (extends do not: a lease pushed forward is not news to the console). */
const TOUCHES: Record<string, Touch> = {
  mwIdemClaim: { record: "own", retentionArg: 5, listed: true, listedBefore: "before", kept: "changed" },
  // Each changes only a processing record of its owner (see `owned-processing.lua`).
  mwIdemComplete: { record: "own", retentionArg: 3, listedBefore: "processing", kept: "changed" },
  mwIdemFail: { record: "own", retentionArg: 3, listedBefore: "processing", kept: "changed" },
  mwIdemMarkQueued: { record: "own", retentionArg: 2, listedBefore: "processing", kept: "changed" },
  mwIdemRelease: { record: "release", kept: "changed" },
  // A dead letter marked to run again moves from the failed records to the processing ones.
  mwIdemRerun: { record: "own", retentionArg: 2, listedBefore: "before", kept: "changed" },
  // The kept index alone: a lease moved (a kept record's lapses later), data kept, a lapsed claim taken over.
  mwIdemExtend: { record: "none", retentionArg: 3, kept: "changed" },
  mwIdemKeep: { record: "none", kept: "changed" },
  mwIdemResume: { record: "none", kept: "always" },
  mwIdemOrderedClaim: { record: "own", retentionArg: 5, lanePrefixArg: 10, listed: true },
  mwIdemOrderedNext: { record: "next", retentionArg: 3, lanePrefixArg: 4 },
  mwIdemOrderedComplete: { record: "own", retentionArg: 3 },
  mwIdemOrderedCompleteNext: { record: "own", retentionArg: 3, lanePrefixArg: 6 },
  mwIdemOrderedFail: { record: "own", retentionArg: 3 },
  mwIdemOrderedFailInLane: { record: "own", retentionArg: 3 },
  mwIdemOrderedRetry: { record: "own", retentionArg: 3 },
  mwIdemOrderedMarkQueued: { record: "own", retentionArg: 2 },
  mwIdemOrderedMarkWaiting: { record: "own", retentionArg: 2 },
  mwIdemOrderedRelease: { record: "release" },
};

/** A claim's last two ARGV for the index: the event type and subscription it tells, '' for none. */
export const listedArgs = (listed: ListedAs | undefined): [string, string] => [
  listed?.eventType ?? "",
  listed?.subscriptionId ?? "",
];

export const RECORD_STATES = ["processing", "queued", "completed", "failed"] as const;

/**
 * `lua` with the index writes after it, the index key appended as the script's last KEY. The script
 * runs as a function, unchanged (a claim's two ARGV for the index taken off first), and its reply says
 * whether (and which) record changed.
 */
export function withTimeIndex(name: string, lua: string): string {
  const touch = TOUCHES[name];
  if (!touch) return lua;
  const retention = touch.retentionArg === undefined ? "nil" : `tonumber(ARGV[${touch.retentionArg}])`;
  // Read before the script: a claim may rewrite the hash whole, a release deletes it.
  const before =
    touch.listed || touch.record === "release" || touch.listedBefore === "before"
      ? "local mw_was = redis.call('HMGET', KEYS[1], 'state', 'eventType', 'subscriptionId', 'carried')"
      : "local mw_was = {}";
  const listedBefore =
    touch.listedBefore === "before" ? "mw_was[1]" : touch.listedBefore ? `'${touch.listedBefore}'` : "nil";
  const told = touch.listed
    ? "local mw_sub = table.remove(ARGV)\nlocal mw_type = table.remove(ARGV)"
    : "local mw_sub, mw_type = '', ''";
  // A release deletes its record: the index and the filters' sets let go of it (the other scripts leave theirs in place).
  const changed =
    touch.record === "release"
      ? `if mw_reply == 1 then
  redis.call('ZREM', mw_index, KEYS[1])
  if mw_was[1] then redis.call('ZREM', mw_base .. ':state:' .. mw_was[1], KEYS[1]) end
  if mw_was[2] then redis.call('ZREM', mw_base .. ':type:' .. mw_was[2], KEYS[1]) end
  if mw_was[3] then redis.call('ZREM', mw_base .. ':sub:' .. mw_was[3], KEYS[1]) end
end`
      : touch.record === "own"
        ? `if (type(mw_reply) == 'number' and mw_reply >= 1) or (type(mw_reply) == 'table' and (mw_reply[1] == 'claimed' or mw_reply[1] == 'queued_at_claim' or mw_reply[1] == 'kept' or mw_reply[1] == 'stale' or mw_reply[1] == 'waiting' or mw_reply[1] == 1)) then mw_touch(KEYS[1], mw_type, mw_sub, ${listedBefore}) end`
        : "";
  // A claim lists only one that keeps data, or had some (a lapsed kept claim taken over): the usual
  // claim reads nothing more.
  const kept =
    touch.kept === "always"
      ? "mw_kept(KEYS[1])"
      : touch.kept === undefined
        ? ""
        : name === "mwIdemClaim"
          ? `if (type(mw_reply) == 'table' and mw_reply[1] == 'kept') or (mw_was[4] and mw_reply ~= 0 and (type(mw_reply) == 'number' or mw_reply[1] == 'queued_at_claim')) then mw_kept(KEYS[1]) end`
          : "if mw_reply ~= 0 then mw_kept(KEYS[1]) end";
  const waiter =
    touch.lanePrefixArg === undefined
      ? ""
      : `if type(mw_reply) == 'table' and mw_reply[4] then mw_touch(ARGV[${touch.lanePrefixArg}] .. mw_reply[4], '', '') end`;
  return `${told}
${before}
local function mw_script()
${lua}
end
local mw_reply = mw_script()
local mw_index, mw_retention = KEYS[#KEYS], ${retention}
local mw_base = string.sub(mw_index, 1, #mw_index - ${SUFFIX.length})
local function mw_add(set, now, record)
  redis.call('ZADD', set, now, record)
  if mw_retention then
    -- Trimmed on about one write in 16 (by the clock's last digits): a record past its retention
    -- stays listed a little longer, and the list skips it, since its hash is gone.
    if now % 16 == 0 then
      redis.call('ZREMRANGEBYSCORE', set, '-inf', '(' .. string.format('%.0f', now - mw_retention))
    end
    -- The set outlives each record listed in it, but its expiry is pushed out only when less than a
    -- retention is left, by an eighth more: about one write in many, not every one (a PTTL reads,
    -- a PEXPIRE writes and is replicated, several times its cost).
    if redis.call('PTTL', set) < mw_retention then
      redis.call('PEXPIRE', set, string.format('%.0f', mw_retention + mw_retention / 8))
    end
  end
end
-- The record listed at its change: in the index, its state's set (and no other state's), and the sets
-- of the event type and subscription it keeps (those it had, else those its claim told: see listedAsOf).
-- Listed before under \`was\` alone (see \`Touch.listedBefore\`), it leaves that state's set; else every other.
local mw_now
local function mw_touch(record, event_type, subscription, was)
  -- One clock read per script, however many records it lists (a take-next lists two).
  if not mw_now then
    local t = redis.call('TIME')
    mw_now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  end
  local now = mw_now
  local r = redis.call('HMGET', record, 'state', 'eventType', 'subscriptionId')
  if not r[1] then return end
  local et = r[2] or (record == KEYS[1] and mw_was[2]) or (event_type ~= '' and event_type) or nil
  local sub = r[3] or (record == KEYS[1] and mw_was[3]) or (subscription ~= '' and subscription) or nil
  if et and et ~= r[2] then redis.call('HSET', record, 'eventType', et) end
  if sub and sub ~= r[3] then redis.call('HSET', record, 'subscriptionId', sub) end
  mw_add(mw_index, now, record)
  for _, state in ipairs({'${RECORD_STATES.join("', '")}'}) do
    if state == r[1] then mw_add(mw_base .. ':state:' .. state, now, record)
    elseif not was or was == state then redis.call('ZREM', mw_base .. ':state:' .. state, record) end
  end
  if et then mw_add(mw_base .. ':type:' .. et, now, record) end
  if sub then mw_add(mw_base .. ':sub:' .. sub, now, record) end
  if r[2] and r[2] ~= et then redis.call('ZREM', mw_base .. ':type:' .. r[2], record) end
  if r[3] and r[3] ~= sub then redis.call('ZREM', mw_base .. ':sub:' .. r[3], record) end
end
-- The kept index: the record listed by its lease while it is processing and keeps data, else not.
local function mw_kept(record)
  local set = mw_base .. '${KEPT_SUFFIX}'
  local k = redis.call('HMGET', record, 'state', 'carried', 'leaseUntil')
  if k[1] == 'processing' and k[2] and k[3] then
    redis.call('ZADD', set, k[3], record)
    if mw_retention and redis.call('PTTL', set) < mw_retention then
      redis.call('PEXPIRE', set, string.format('%.0f', mw_retention + mw_retention / 8))
    end
  else
    redis.call('ZREM', set, record)
  end
end
${changed}
${kept}
${waiter}
return mw_reply
`;
}

/** Whether the client is a Redis Cluster (records spread over slots, so one index per slot). */
export function isCluster(client: RedisClient): boolean {
  return (client as { isCluster?: boolean }).isCluster === true;
}

const SUFFIX = ":time-index";
/**
 * The kept index beside the time index (`${prefix}{tag}:kept`, in the slot of the records it lists): the
 * processing records that keep an in-process queue's data (`KeptNotifications`), scored by their lease's
 * end, written by the scripts that change them (see `Touch.kept`). A receiver's sweep reads the lapsed
 * ones alone (`lapsedFromIndex`).
 */
const KEPT_SUFFIX = ":kept";

/** The index the record at `recordKey` is listed in. */
export function timeIndexKey(prefix: string, recordKey: string, cluster: boolean): string {
  return slotIndexKey(prefix, recordKey, cluster, SUFFIX);
}

/** A per-slot set (see above) with this suffix, in the slot of `key`: `${prefix}{tag}${suffix}`. */
export function slotIndexKey(prefix: string, key: string, cluster: boolean, suffix: string): string {
  return `${prefix}{${cluster ? slotTag(keySlot(key)) : "all"}}${suffix}`;
}

/**
 * The sets a page with these filters is read along (see `withTimeIndex`): its subscription's, else its
 * event type's, else its state's, else the time index; the narrowest its filters name.
 */
function filterSuffix(query: ListQuery): string {
  if (query.subscriptionId !== undefined) return `:sub:${query.subscriptionId}`;
  if (query.eventType !== undefined) return `:type:${query.eventType}`;
  if (query.state !== undefined) return `:state:${query.state}`;
  return SUFFIX;
}

/**
 * Every set of the store with this suffix: one, or on a cluster one per slot (just one when the prefix
 * holds a hash tag).
 */
export function allIndexKeys(prefix: string, cluster: boolean, suffix = SUFFIX): string[] {
  if (!cluster) return [`${prefix}{all}${suffix}`];
  const keys = new Set<string>();
  for (let slot = 0; slot < SLOTS; slot++) keys.add(`${prefix}{${slotTag(slot)}}${suffix}`);
  // A hash tag in the prefix puts every key of the store in its slot: the per-slot names are one index.
  const slots = new Map<number, string>();
  for (const key of keys) if (!slots.has(keySlot(key))) slots.set(keySlot(key), key);
  return [...slots.values()];
}

const SLOTS = 16384;
/** Most index members a page reads in one round. */
const MAX_BATCH = 1_000;
const PIPELINE_SLICE = 512;
let tags: string[] | undefined;

/** A short string whose hash slot is `slot`, found once for all slots (about 160,000 CRC16s, a few ms). */
function slotTag(slot: number): string {
  if (!tags) {
    const found: string[] = new Array(SLOTS);
    let left = SLOTS;
    for (let n = 0; left > 0; n++) {
      const tag = n.toString(36);
      const at = keySlot(tag);
      if (found[at] === undefined) {
        found[at] = tag;
        left--;
      }
    }
    tags = found;
  }
  return tags[slot]!;
}

/** A record key's id and, for a record claimed in order (`${prefix}{key}:n:${id}`), its order key. */
function idOf(prefix: string, recordKey: string): { id: string; orderKey?: string } {
  const rest = recordKey.slice(prefix.length);
  const ordered = /^\{([^}]*)\}:n:/.exec(rest);
  if (!ordered) return { id: rest };
  return {
    id: rest.slice(ordered[0].length),
    orderKey: ordered[1]!.replace(/%(25|7B|7D)/gi, (escaped) => decodeURIComponent(escaped)),
  };
}

type Hash = Record<string, string>;

/** The listed record an index member names, from its hash; undefined when the record is gone. */
function itemOf(
  prefix: string,
  member: { id: string; updatedAt: number },
  hash: Hash,
  toRecord: (hash: Hash) => Omit<ListedRecord, "id" | "updatedAt"> | undefined,
): ListedRecord | undefined {
  const record = toRecord(hash);
  if (!record) return undefined;
  const { id, orderKey } = idOf(prefix, member.id);
  const item: ListedRecord = { ...record, id, updatedAt: member.updatedAt };
  if (hash.eventType !== undefined) item.eventType = hash.eventType;
  if (hash.subscriptionId !== undefined) item.subscriptionId = hash.subscriptionId;
  if (orderKey !== undefined)
    item.order = hash.position ? { key: orderKey, position: hash.position } : { key: orderKey };
  return item;
}

/**
 * A page of records from the index, newest first: each round reads the next `batch` members of every
 * index below the cursor, merges them, and reads those records' hashes; members whose record is gone
 * (expired, released) and records the filters refuse are passed over.
 */
export async function listFromIndex(
  client: RedisClient,
  prefix: string,
  query: ListQuery,
  toRecord: (hash: Hash) => Omit<ListedRecord, "id" | "updatedAt"> | undefined,
  orderedPrefix: (orderKey: string) => string,
): Promise<ListPage> {
  const limit = listCursor.limitOf(query);
  const cluster = isCluster(client);
  if (query.id !== undefined) return listOne(client, prefix, { ...query, id: query.id }, toRecord, cluster);
  const onlyKey = query.orderKey === undefined ? undefined : orderedPrefix(query.orderKey);
  const suffix = filterSuffix(query);
  const keys = onlyKey
    ? [timeIndexKey(prefix, onlyKey, cluster).slice(0, -SUFFIX.length) + suffix]
    : allIndexKeys(prefix, cluster, suffix);
  // A page's worth and one more first (read along its filter's set, nearly every member matches),
  // more each round when many are passed over.
  let batch = limit + 1;
  const min = query.since === undefined ? "-inf" : String(query.since);
  let frontier = listCursor.parse(query.cursor);
  if (query.until !== undefined && (frontier === undefined || frontier.updatedAt > query.until))
    frontier = { updatedAt: query.until, id: "\u{10FFFF}" };
  const items: ListedRecord[] = [];
  for (;;) {
    const max = frontier === undefined ? "+inf" : String(frontier.updatedAt);
    const replies = await rangeEach(client, keys, max, min, batch);
    const members: Array<{ id: string; updatedAt: number }> = [];
    let more = false;
    for (const reply of replies) {
      if (reply.length >= batch * 2) more = true;
      for (let i = 0; i < reply.length; i += 2) {
        const member = { id: reply[i]!, updatedAt: Number(reply[i + 1]) };
        if (listCursor.after(member, frontier) && (onlyKey === undefined || member.id.startsWith(onlyKey)))
          members.push(member);
      }
    }
    members.sort((a, b) => b.updatedAt - a.updatedAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
    const round = members.slice(0, batch);
    if (members.length > batch) more = true;
    const hashes = await Promise.all(round.map((member) => client.hgetall(member.id)));
    for (const [i, member] of round.entries()) {
      const item = itemOf(prefix, member, hashes[i]!, toRecord);
      if (!item || !matchesListQuery(item, query)) continue;
      items.push(item);
      if (items.length === limit) {
        // The cursor names the index member, which sorts as the pages do.
        return { items, cursor: listCursor.of(member) };
      }
    }
    if (!more || round.length === 0) return { items };
    frontier = round[round.length - 1];
    batch = Math.min(batch * 2, MAX_BATCH);
  }
}

/**
 * Up to `limit` ids of records in the kept index whose lease ended by this process's clock (a hint:
 * RESUME decides on the server's): one range read per index, whatever the store holds besides.
 */
export async function lapsedFromIndex(client: RedisClient, prefix: string, limit: number): Promise<string[]> {
  const keys = allIndexKeys(prefix, isCluster(client), KEPT_SUFFIX);
  const replies = await rangeEach(client, keys, String(Date.now()), "-inf", limit);
  const members: Array<{ key: string; leaseUntil: number }> = [];
  for (const reply of replies)
    for (let i = 0; i < reply.length; i += 2) members.push({ key: reply[i]!, leaseUntil: Number(reply[i + 1]) });
  // Each index gives its last lapsed first; across indexes the longest lapsed of those go first. A
  // sweep takes them in turns of `limit`, each taken over leaving the range (its lease moves on).
  members.sort((a, b) => a.leaseUntil - b.leaseUntil);
  return members.slice(0, limit).map((member) => idOf(prefix, member.key).id);
}

/**
 * The record of one id: an unordered one by its own key's score; one claimed in order (whose key
 * names its order key, unknown here) by a scan of the indexes for members ending in `:n:${id}`.
 */
async function listOne(
  client: RedisClient,
  prefix: string,
  query: ListQuery & { id: string },
  toRecord: (hash: Hash) => Omit<ListedRecord, "id" | "updatedAt"> | undefined,
  cluster: boolean,
): Promise<ListPage> {
  const own = prefix + query.id;
  const candidates: Array<{ id: string; updatedAt: number }> = [];
  const score = await client.zscore(timeIndexKey(prefix, own, cluster), own);
  if (score !== null) candidates.push({ id: own, updatedAt: Number(score) });
  else {
    const pattern = `${globEscape(prefix)}{*}:n:${globEscape(query.id)}`;
    for (const key of allIndexKeys(prefix, cluster)) {
      let cursor = "0";
      do {
        const [next, reply] = await client.zscan(key, cursor, "MATCH", pattern, "COUNT", 1_000);
        cursor = next;
        for (let i = 0; i < reply.length; i += 2) candidates.push({ id: reply[i]!, updatedAt: Number(reply[i + 1]) });
      } while (cursor !== "0");
    }
  }
  const items: ListedRecord[] = [];
  for (const member of candidates) {
    const item = itemOf(prefix, member, await client.hgetall(member.id), toRecord);
    if (item && matchesListQuery(item, query)) items.push(item);
  }
  return { items: items.slice(0, listCursor.limitOf(query)) };
}

const globEscape = (text: string) => text.replace(/[*?[\]\\]/g, (c) => `\\${c}`);

/**
 * ZREVRANGEBYSCORE on every index: on one Redis, as separate calls; on a cluster, one pipeline per
 * master holding the indexes of its slots (16,384 ranges in three round trips, not 16,384).
 */
export async function rangeEach(
  client: RedisClient,
  keys: string[],
  max: string,
  min: string,
  batch: number,
): Promise<string[][]> {
  const range = ["WITHSCORES", "LIMIT", 0, batch] as const;
  const cluster = client as Partial<Cluster>;
  if (!isCluster(client) || keys.length === 1 || !cluster.slots || !cluster.nodes)
    return Promise.all(keys.map((key) => client.zrevrangebyscore(key, max, min, ...range)));
  const masters = new Map(cluster.nodes("master").map((node) => [`${node.options.host}:${node.options.port}`, node]));
  const groups = new Map<string, number[]>();
  keys.forEach((key, i) => {
    const at = cluster.slots![keySlot(key)]?.[0] ?? "";
    groups.set(at, [...(groups.get(at) ?? []), i]);
  });
  const replies: string[][] = new Array(keys.length);
  await Promise.all(
    [...groups].map(async ([at, indexes]) => {
      const node = masters.get(at);
      if (!node) {
        // The slot map is changing (a failover): ask through the cluster client, which follows redirects.
        for (const i of indexes) replies[i] = await client.zrevrangebyscore(keys[i]!, max, min, ...range);
        return;
      }
      // In slices, one after another: each command of a pipeline is held to the connection's command
      // timeout, which thousands queued behind each other on a busy node would pass.
      for (let from = 0; from < indexes.length; from += PIPELINE_SLICE) {
        const slice = indexes.slice(from, from + PIPELINE_SLICE);
        const pipeline = node.pipeline();
        for (const i of slice) pipeline.zrevrangebyscore(keys[i]!, max, min, ...range);
        const results = (await pipeline.exec()) ?? [];
        slice.forEach((i, n) => {
          const [err, reply] = results[n] ?? [new Error("the pipeline was discarded"), undefined];
          if (err) throw err;
          replies[i] = reply as string[];
        });
      }
    }),
  );
  return replies;
}
