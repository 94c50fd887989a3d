import { Redis } from "ioredis";
import { createAdmin } from "merchant-webhooks/console";
import { redisStore } from "merchant-webhooks/redis";
import { afterAll, describe, expect, it } from "vitest";
import { eventually, REDIS_URL, removeKeys, uniquePrefix } from "../support/redis.js";

/** Short, so the holder's claim lapses within the test. */
const LEASE_MS = 300;

/**
 * A worker that held a subscription and died leaves its notification `processing`; the next look at
 * the lane (the sweep's, a take-over's) puts it back in line, `queued`. The console's state filter must
 * follow: on `redisStore` it reads along per-state sets, which the script moving it back must move it
 * between, or the notification is listed under neither state.
 */
describe("a lapsed holder put back in line, as the console's state filter lists it", () => {
  const prefix = uniquePrefix("lapsed-listed");
  const redis = new Redis(REDIS_URL);
  const store = redisStore({ connection: REDIS_URL, prefix, leaseMs: LEASE_MS });
  const admin = createAdmin({ idempotency: store });
  afterAll(async () => {
    await store.close();
    await removeKeys(redis, prefix);
    redis.disconnect();
  });

  const key = "M-1:SUB-LAPSED";
  const order = (position: string) => ({ key, position });
  const listed = async (state: "queued" | "processing") =>
    (await admin.listNotifications({ state })).items.map((item) => item.id);

  it("moves from processing to queued in the list when the sweep's look puts it back", async () => {
    for (const [id, position] of [
      ["WH-lapsed-a", "2026-03-01T01:00:00"],
      ["WH-lapsed-b", "2026-03-01T02:00:00"],
    ] as const) {
      const claim = await store.claim({
        id,
        fingerprint: `f-${id}`,
        owner: `r-${id}`,
        leaseMs: 30_000,
        order: order(position),
        kind: "append",
      });
      expect(claim.status).toBe("claimed");
      expect(await store.markQueued({ id, owner: `r-${id}`, order: order(position) })).toBe(true);
    }
    // A worker takes the first and dies holding it.
    expect(await store.lanes.takeNext({ key }, "doomed-worker", LEASE_MS)).toMatchObject({ id: "WH-lapsed-a" });
    expect(await listed("processing")).toEqual(["WH-lapsed-a"]);

    // Once its lease lapsed, the sweep's look at the lane finds it stalled and puts the holder back.
    await eventually(
      async () => (await store.lanes.stalled({ before: Date.now() + 1, limit: 10 })).some((lane) => lane.key === key),
      10_000,
      "the lane to be stalled",
    );
    expect((await store.get({ id: "WH-lapsed-a", order: { key } }))?.state).toBe("queued");
    expect(await listed("processing")).toEqual([]);
    expect((await listed("queued")).sort()).toEqual(["WH-lapsed-a", "WH-lapsed-b"]);
  });
});
