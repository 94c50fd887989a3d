import { Redis } from "ioredis";
import { STORE_PREFIX } from "./fault-rig.js";

export interface StoredRecord {
  state: string | null;
  attempts: number;
}

/** Each id's idempotency record as the store's Redis holds it (state null: no record). */
export async function storedRecords(url: string, ids: readonly string[]): Promise<Map<string, StoredRecord>> {
  const redis = new Redis(url);
  try {
    const records = new Map<string, StoredRecord>();
    for (let from = 0; from < ids.length; from += 1_000) {
      const chunk = ids.slice(from, from + 1_000);
      const pipeline = redis.pipeline();
      for (const id of chunk) pipeline.hmget(`${STORE_PREFIX}${id}`, "state", "attempts");
      const replies = (await pipeline.exec()) ?? [];
      chunk.forEach((id, i) => {
        const [err, value] = replies[i] ?? [new Error("no reply"), null];
        if (err) throw err;
        const [state, attempts] = value as [string | null, string | null];
        records.set(id, { state, attempts: Number(attempts ?? 0) });
      });
    }
    return records;
  } finally {
    redis.disconnect();
  }
}
