import { Redis } from "ioredis";
import type { ReceiverProcess } from "../redis/fixtures/spawn-receiver.js";
import { REDIS_URL, removeKeys, uniquePrefix } from "../support/redis.js";
import { type PersistentRedis, persistentRedis } from "./persistent-redis.js";
import { type FaultReceiverEnv, spawnFaultReceiver } from "./spawn-fault-receiver.js";

export const STORE_PREFIX = "idem:";

/**
 * What the fault suite runs: its own persistent Redis for the idempotency store (the one it stops and
 * freezes), two receiver processes on it, and the journal on the main Redis (REDIS_URL, never
 * disturbed) where the handlers' effects are recorded.
 */
export interface FaultRig {
  readonly storeRedis: PersistentRedis;
  /** The receivers currently serving; an entry is replaced when its process is killed and restarted. */
  readonly receivers: ReceiverProcess[];
  readonly journal: Redis;
  readonly journalPrefix: string;
  /** Every receiver pid ever started, killed or not. */
  readonly pids: number[];
  /** SIGKILL receivers[index], start a new process in its place, and return the killed pid. */
  killAndReplace(index: number): Promise<number>;
  close(): Promise<void>;
}

export async function startFaultRig(leaseMs: number): Promise<FaultRig> {
  const journal = new Redis(REDIS_URL);
  const journalPrefix = uniquePrefix("faults");
  const storeRedis = await persistentRedis();
  const env: FaultReceiverEnv = {
    STORE_URL: storeRedis.url,
    STORE_PREFIX,
    JOURNAL_URL: REDIS_URL,
    JOURNAL: journalPrefix,
    LEASE_MS: String(leaseMs),
  };
  const receivers: ReceiverProcess[] = [];
  const everyProcess: ReceiverProcess[] = [];
  const spawn = async () => {
    const receiver = await spawnFaultReceiver(env);
    everyProcess.push(receiver);
    return receiver;
  };

  const rig: FaultRig = {
    storeRedis,
    receivers,
    journal,
    journalPrefix,
    get pids() {
      return everyProcess.map((receiver) => receiver.pid);
    },
    async killAndReplace(index) {
      const victim = receivers[index]!;
      await victim.kill();
      receivers[index] = await spawn();
      return victim.pid;
    },
    async close() {
      await Promise.all(everyProcess.map((receiver) => receiver.kill()));
      await storeRedis.destroy();
      await removeKeys(journal, journalPrefix);
      journal.disconnect();
    },
  };
  try {
    receivers.push(...(await Promise.all([spawn(), spawn()])));
  } catch (err) {
    await rig.close();
    throw err;
  }
  return rig;
}
