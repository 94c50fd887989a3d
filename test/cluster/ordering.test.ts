import type { Cluster } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { redisStore } from "merchant-webhooks/redis";
import { orderedKeys } from "../../src/redis/ordered-scripts.js";
import { orderContract } from "../idempotency/order-contract.js";
import { clusterForFile } from "./fixtures/cluster-suite.js";

const cluster = await clusterForFile("test/cluster/ordering.test.ts");
let stores = 0;

// The two-key scripts on a real cluster: a key outside the script's slot would fail with CROSSSLOT.
if (cluster)
  orderContract("redisStore on a Redis Cluster", async () =>
    redisStore({ redis: await cluster.client(), prefix: `order-contract-${++stores}:` }),
  );

describe.skipIf(!cluster)("ordered records on a Redis Cluster of 3 masters", () => {
  afterAll(async () => {
    await cluster?.stop();
  }, 30_000);

  it("keeps each subscription's records and position in one slot, and spreads subscriptions over every master", async () => {
    const client: Cluster = await cluster!.client();
    const prefix = "order-spread:";
    const store = redisStore({ redis: client, prefix });
    const subscriptions = Array.from({ length: 300 }, (_, i) => `M-1:SUB-${i}`);
    for (const key of subscriptions) {
      for (const [n, position] of ["2026-03-01T02:00:00", "2026-03-01T03:00:00"].entries()) {
        const owner = `${key}-${n}`;
        // An id is bound to one subscription (a used id under another answers as that one's): one id each.
        const id = `${key}:evt-${n}`;
        expect(
          await store.claim({ id, fingerprint: "f", owner, leaseMs: 30_000, order: { key, position } }),
        ).toMatchObject({ status: "claimed" });
        expect(
          await store.complete({ id, owner: owner, order: { key: key } }, { processed: true, message: "processed" }),
        ).toBe(true);
      }
    }
    const slotOf = (key: string) => client.cluster("KEYSLOT", key) as Promise<number>;
    const slots = new Set<number>();
    for (const key of subscriptions) {
      const keys = orderedKeys(prefix, key, `${key}:evt-0`);
      const slot = await slotOf(keys.order);
      expect(await slotOf(keys.record)).toBe(slot);
      expect(await slotOf(orderedKeys(prefix, key, `${key}:evt-1`).record)).toBe(slot);
      slots.add(slot);
    }
    // Spread is per subscription: 300 subscriptions land in (nearly) 300 slots, on all three masters.
    expect(slots.size).toBeGreaterThan(250);
    const perMaster = await Promise.all(client.nodes("master").map((node) => node.dbsize()));
    for (const count of perMaster) expect(count).toBeGreaterThan(100);
  });
});
