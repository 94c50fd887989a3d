import { sleep } from "../support/redis.js";
import type { FaultRig } from "./fault-rig.js";

export interface FaultTiming {
  /** How long the store's Redis stays stopped. Default 1,500 ms. */
  redisDownMs?: number;
  /**
   * How long it stays frozen (SIGSTOP). Default 2,000 ms: four times the store's 500 ms limit, so
   * deliveries sent while it is frozen meet the limit, not the thaw.
   */
  freezeMs?: number;
}

export interface InjectedFaults {
  redisRestarts: number;
  redisFreezes: number;
  killedPids: number[];
}

/**
 * The faults, each at a point of the load (so each lands while notifications are flowing, however fast
 * the machine): at a quarter of the acknowledgements the store's Redis is stopped and started again; at
 * half a receiver is killed with SIGKILL and a new process takes its place; at three quarters Redis
 * hangs (SIGSTOP) and resumes. `reached(fraction)` resolves when the load gets there; `enter` names
 * the phase the answers from then on are counted under.
 */
export async function injectFaults(
  rig: FaultRig,
  reached: (fraction: number) => Promise<void>,
  enter: (phase: string) => void,
  timing: FaultTiming,
  injected: InjectedFaults,
): Promise<void> {
  await reached(0.25);
  enter("redis stopping");
  await rig.storeRedis.stop();
  enter("redis stopped");
  await sleep(timing.redisDownMs ?? 1_500);
  await rig.storeRedis.start();
  injected.redisRestarts++;
  enter("redis restarted");

  await reached(0.5);
  enter("receiver killed");
  injected.killedPids.push(await rig.killAndReplace(0));
  enter("receiver replaced");

  await reached(0.75);
  enter("redis frozen");
  rig.storeRedis.freeze();
  await sleep(timing.freezeMs ?? 2_000);
  rig.storeRedis.thaw();
  injected.redisFreezes++;
  enter("redis thawed");
}
