import { createReceiver, memoryStore } from "merchant-webhooks";
import { buildNotification } from "merchant-webhooks/testing";
import { describe, expect, it } from "vitest";
import { silentLogger } from "../support/capture-logger.js";

const MAX_BYTES = 1024 * 1024;

describe("memoryStore's ordering table under notifications of ever new, long subscription ids", () => {
  it("stays within maxBytes, like the records, and keeps the newest subscriptions' positions", async () => {
    const store = memoryStore({ maxBytes: MAX_BYTES });
    const receiver = createReceiver({
      idempotency: store,
      logger: silentLogger(),
      ordering: true,
      bodyLimit: 1024 * 1024,
      onRenew: () => {},
      onCancel: () => {},
    });
    const longId = (n: number) => `SUB-${n}-${"x".repeat(32 * 1024)}`;
    const send = async (type: "SUBSCRIPTION_RENEW" | "SUBSCRIPTION_CANCELLED", n: number, at: string) => {
      const notification = buildNotification(
        type,
        { resource: { merchant_id: "M-1", id: longId(n), update_time: at } },
        { random: true },
      );
      return receiver.handle({
        method: "POST",
        headers: { "content-type": "application/json" },
        rawBody: new TextEncoder().encode(JSON.stringify(notification)),
      });
    };
    // 200 subscriptions of 64 KiB keys each: 12.5 MiB of positions were the table unbounded in bytes.
    for (let n = 0; n < 200; n++)
      expect((await send("SUBSCRIPTION_RENEW", n, "2026-03-01T10:00:00Z")).status).toBe(200);
    expect(store.bytes).toBeLessThanOrEqual(MAX_BYTES);
    expect(store.orderBytes).toBeLessThanOrEqual(MAX_BYTES);
    expect(store.orderBytes).toBeGreaterThan(MAX_BYTES / 2);
    expect(store.orderKeys).toBeLessThan(200);
    expect(store.orderKeys).toBeGreaterThan(0);
    // The newest subscription's position is still there: an older notification of it is stale.
    const stale = await send("SUBSCRIPTION_CANCELLED", 199, "2026-03-01T09:00:00Z");
    expect(JSON.parse(stale.body).message).toMatch(/^stale: /);
    await receiver.close();
  });
});
