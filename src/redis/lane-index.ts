import { laneQueueEnding } from "../idempotency/lane-queue.js";
import type { StalledLane, StalledLanesQuery, WokenLane } from "../idempotency/store.js";
import type { FailFastConnection } from "./fail-fast-connection.js";
import { SCRIPTS } from "./lua/scripts.generated.js";
import { orderedKeys } from "./ordered-scripts.js";
import { type StoredScript, storedScript } from "./script-command.js";
import { allIndexKeys, isCluster, rangeEach, slotIndexKey } from "./time-index.js";

/**
 * The lanes index of `redisStore`: the order hashes of lanes with notifications waiting, scored by their
 * last append, written by the append's own script (`lua/includes/lane-index.lua`). A script reaches
 * only its own hash slot on a cluster, so the index is one sorted set per slot, named as the time
 * index's sets are (`${prefix}{tag}:lanes`, `tag` hashing to the lane's slot); on one Redis, one set.
 * The queue's sweep reads it to find a lane whose drain job was lost from the store's side: the lane
 * is found as long as the store keeps it, whatever the queue lost.
 */
const SUFFIX = ":lanes";

/** The lanes index the lane of `orderHashKey` is listed in. */
export const laneIndexKey = (prefix: string, orderHashKey: string, cluster: boolean): string =>
  slotIndexKey(prefix, orderHashKey, cluster, SUFFIX);

const LOOK = storedScript("mwIdemLaneLook", SCRIPTS.LANE_LOOK, 4);
const WAKE = storedScript("mwIdemLaneWake", SCRIPTS.LANE_WAKE, 4);

/** The order key and keys of the lane whose order hash is `orderHash` (see `orderedKeys`). */
function laneOf(prefix: string, orderHash: string) {
  const tag = /^\{([^}]*)\}:order$/.exec(orderHash.slice(prefix.length))?.[1];
  if (tag === undefined || !orderHash.startsWith(prefix)) return undefined;
  const key = tag.replace(/%(25|7B|7D)/gi, (escaped) => decodeURIComponent(escaped));
  return { key, ...orderedKeys(prefix, key, "") };
}

/** `stalled` and `wake` of a `redisStore`'s lanes under `prefix`, on its connection. */
export function laneSweep(connection: FailFastConnection, prefix: string, retentionMs: number) {
  const cluster = isCluster(connection.client);
  for (const script of [LOOK, WAKE] as StoredScript[])
    connection.client.defineCommand(script.name, { lua: script.lua, numberOfKeys: script.numberOfKeys });
  let indexes: string[] | undefined;
  const recordOf = (recordPrefix: string, recordKey: string) =>
    recordKey.startsWith(recordPrefix) ? recordKey.slice(recordPrefix.length) : undefined;

  return {
    async stalled({ before, limit, queue, wokenBefore }: StalledLanesQuery): Promise<StalledLane[]> {
      indexes ??= allIndexKeys(prefix, cluster, SUFFIX);
      const keys = indexes;
      // Every index's due lanes (on a cluster one pipeline per master, 16,384 ranges): not under the
      // store's call limit, kept short for the receive path, as `list` is not; each command is still
      // bounded by the connection's own command timeout, and the sweep bounds the whole.
      await connection.run("stalled lanes", async () => undefined);
      const replies = await rangeEach(connection.client, keys, String(before), "-inf", limit);
      const due = replies
        .flatMap((reply) => reply.filter((_, i) => i % 2 === 0))
        .slice(0, limit)
        .flatMap((member) => {
          const lane = laneOf(prefix, member);
          return lane ? [{ member, lane }] : [];
        });
      // A look that fails (its node failing over) leaves that lane to the next sweep, not the others.
      const looks = await Promise.all(
        due.map(({ member, lane }) =>
          connection
            .runScript("stalled lanes", LOOK, [
              laneIndexKey(prefix, member, cluster),
              lane.order,
              lane.waiting,
              lane.carried,
              member,
              lane.recordPrefix,
              queue === undefined ? "" : laneQueueEnding(queue),
              wokenBefore ?? before,
            ])
            .catch(() => ["unanswered"]),
        ),
      );
      const stalled: StalledLane[] = [];
      looks.forEach((reply, i) => {
        const [verdict, head, drainKey] = reply as [string, string?, string?];
        if (verdict !== "stalled" || head === undefined) return;
        const { lane } = due[i]!;
        const drain = drainKey ? recordOf(lane.recordPrefix, drainKey) : undefined;
        stalled.push(drain === undefined ? { key: lane.key, head } : { key: lane.key, head, drain });
      });
      return stalled;
    },

    async wake(stalled: StalledLane, leaseMs: number): Promise<WokenLane | undefined> {
      const keys = orderedKeys(prefix, stalled.key, "");
      const reply = (await connection.runScript("wake lane", WAKE, [
        laneIndexKey(prefix, keys.order, cluster),
        keys.order,
        keys.waiting,
        keys.carried,
        keys.order,
        keys.recordPrefix,
        stalled.drain === undefined ? "" : keys.recordPrefix + stalled.drain,
        leaseMs,
        retentionMs,
      ])) as [] | [string, string];
      if (reply.length === 0) return undefined;
      const [id, carried] = reply;
      return carried === "" ? { id } : { id, carried };
    },
  };
}
