import type { HandlerContext, SubscriptionNotification } from "merchant-webhooks";
import { createPaymentClient } from "merchant-webhooks/client";
import { describe, expect, it } from "vitest";
import { notification } from "../support/notifications.js";
import { eventually } from "../support/redis.js";
import { TRANSPORTS, transportBed } from "./transports.js";

describe.each(TRANSPORTS)("ctx.platform in a worker's handlers, on $name", (transport) => {
  const bed = transportBed(transport, "platform");

  it("is the client the worker was given, and undefined without one", async () => {
    // A client nothing answers: the handlers here only look at which one they were given.
    const platform = createPaymentClient({ baseUrl: "http://127.0.0.1:9" });
    const seen = new Map<string, unknown>();
    const onRenew = async (n: SubscriptionNotification, ctx: HandlerContext) => void seen.set(n.id, ctx.platform);
    const run = async (name: string, withPlatform: boolean) => {
      const line = bed.line(name);
      bed.worker(name, { onRenew, ...(withPlatform ? { platform } : {}) });
      const body = notification();
      expect(await line.deliver(body)).toBe(200);
      await eventually(async () => seen.has(body.id), 15_000, "the handler to run");
      return seen.get(body.id);
    };
    expect(await run("with-platform", true)).toBe(platform);
    expect(await run("without-platform", false)).toBeUndefined();
  });
});
