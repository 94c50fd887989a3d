import { readFileSync } from "node:fs";
import type { Redis } from "ioredis";

/**
 * What the queue benches (`queue-cpu.ts`, `drain-commandstats.ts`) share: bodies of the renewal
 * fixture under fresh ids, and the CPU a redis-server has used so far.
 */
const template = JSON.stringify(
  JSON.parse(readFileSync(new URL("../test/fixtures/renewal.json", import.meta.url), "utf8")),
);
const encoder = new TextEncoder();

/** A maker of `n` renewal bodies a call, each id `${prefix}-${call}-${i}`, new at every call. */
export function renewalBodies(prefix: string): (n: number) => Uint8Array[] {
  let batch = 0;
  return (n) => {
    batch++;
    return Array.from({ length: n }, (_, i) =>
      encoder.encode(template.replace(/"id":\s*"[^"]*"/, `"id":"${prefix}-${batch}-${i}"`)),
    );
  };
}

/** The server's CPU so far (`INFO cpu`, user and system), in µs. */
export async function redisCpuUs(redis: Redis): Promise<number> {
  const info = await redis.info("cpu");
  const field = (name: string) => Number(new RegExp(`${name}:([\\d.]+)`).exec(info)?.[1] ?? 0);
  return (field("used_cpu_user") + field("used_cpu_sys")) * 1e6;
}
