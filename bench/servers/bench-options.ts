import { pino } from "pino";
import { memoryStore, type IdempotencyStore } from "merchant-webhooks";

/** Log lines are produced and serialized as in production, then written to /dev/null. */
export const benchLogger = () => pino(pino.destination({ dest: "/dev/null", sync: false }));

/** The memory store, large enough that no record is evicted during a run. */
export async function benchStore(): Promise<IdempotencyStore> {
  return memoryStore({ maxEntries: 2_000_000 });
}
