import { memoryStore } from "merchant-webhooks";
import { consoleHandler, createAdmin } from "merchant-webhooks/console";
import { describe, expect, it } from "vitest";
import { consoleSession, readable } from "./console-session.js";

describe("a filtered list page", () => {
  it("reads the filter's own index: the one match among 1,100 records on the first page, else None. and no next page", async () => {
    const store = memoryStore();
    // More records than one filtered page used to read (the store's pages, 21 of 50); the oldest is the
    // only resumption, so a walk in time order from the newest would not reach it on the first page.
    for (let i = 0; i < 1_100; i++) {
      const eventType = i === 0 ? "SUBSCRIPTION_RESUMED" : "SUBSCRIPTION_RENEW";
      const claim = await store.claim({
        id: `WH-${i}`,
        fingerprint: `fp-${i}`,
        owner: `o-${i}`,
        leaseMs: 30_000,
        listedAs: { eventType, subscriptionId: `SUB-${i % 7}` },
      });
      if (claim.status !== "claimed") throw new Error(`claim of WH-${i}: ${claim.status}`);
      await store.complete(claim, { processed: true, message: "processed" });
    }
    const ops = consoleSession(
      consoleHandler({
        admin: createAdmin({ idempotency: store }),
        authorize: (request) => request.headers.get("authorization") === "Bearer ops",
      }),
    );
    const found = await ops.get("/console/notifications?eventType=SUBSCRIPTION_RESUMED&limit=1");
    expect(found.status).toBe(200);
    expect(readable(found.text)).toContain("WH-0");
    expect(found.text).not.toContain('rel="next"');

    const none = await ops.get("/console/notifications?eventType=SUBSCRIPTION_CANCELLED&limit=1");
    expect(none.status).toBe(200);
    expect(readable(none.text)).toContain("None.");
    expect(none.text).not.toContain('rel="next"');
  });
});
