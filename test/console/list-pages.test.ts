import { memoryStore } from "merchant-webhooks";
import { consoleHandler, createAdmin } from "merchant-webhooks/console";
import { describe, expect, it } from "vitest";
import { consoleSession, readable } from "./console-session.js";

describe("a filtered list page with nothing among the records it read", () => {
  it("says older records are on the next pages, rather than a bare None.", async () => {
    const store = memoryStore();
    // More records than one filtered page reads (the store's pages, 21 of 50), none of the event type.
    for (let i = 0; i < 1_100; i++) {
      const claim = await store.claim({ id: `WH-${i}`, fingerprint: `fp-${i}`, owner: `o-${i}`, leaseMs: 30_000 });
      if (claim.status !== "claimed") throw new Error(`claim of WH-${i}: ${claim.status}`);
      await store.complete(claim, { processed: true, message: "processed" });
    }
    const ops = consoleSession(
      consoleHandler({
        admin: createAdmin({ idempotency: store }),
        authorize: (request) => request.headers.get("authorization") === "Bearer ops",
      }),
    );
    const page = await ops.get("/console/notifications?eventType=SUBSCRIPTION_RESUMED&limit=1");
    expect(page.status).toBe(200);
    expect(readable(page.text)).toContain("None among the records read so far; older ones are on the next pages.");
    expect(page.text).toContain('rel="next"');
  });
});
