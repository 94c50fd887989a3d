import { memoryStore } from "merchant-webhooks";
import { createAdmin } from "merchant-webhooks/console";
import { describe, expect, it } from "vitest";
import { adminContract } from "./admin-contract.js";

adminContract("memory", async () => ({ store: memoryStore(), cleanup: async () => {} }));

describe("discard", () => {
  it("leaves a notification waiting its turn in order alone, and never touches another", async () => {
    const store = memoryStore();
    const admin = createAdmin({ idempotency: store });
    const order = { key: "M1:SUB-1", position: "2026-11-01T00:00:00.000000000Z" };
    const waiting = await store.claim({
      id: "in-order-2",
      fingerprint: "f2",
      owner: "r2",
      leaseMs: 30_000,
      order,
      kind: "append",
    });
    expect(waiting.status).toBe("claimed");
    expect(store.markQueued({ id: "in-order-2", owner: "r2", order })).toBe(true);
    const result = await admin.discard("in-order-2", { reason: "no longer wanted" });
    expect(result).toEqual({
      discarded: false,
      message: "waiting its turn in its subscription's order; not discarded",
    });
    expect(store.get("in-order-2")).toMatchObject({ state: "queued" });
  });
});
