import { fileURLToPath } from "node:url";
import { type ReceiverProcess, spawnReceiver } from "../redis/fixtures/spawn-receiver.js";

const script = fileURLToPath(new URL("./fault-receiver-process.ts", import.meta.url));

export interface FaultReceiverEnv {
  STORE_URL: string;
  STORE_PREFIX: string;
  JOURNAL_URL: string;
  JOURNAL: string;
  LEASE_MS: string;
}

/** Start `fault-receiver-process.ts` in a child Node process and wait until it listens. */
export function spawnFaultReceiver(env: FaultReceiverEnv): Promise<ReceiverProcess> {
  return spawnReceiver({ ...env }, { script });
}
