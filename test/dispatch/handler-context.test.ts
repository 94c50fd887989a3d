import { createReceiver, type HandlerContext } from "merchant-webhooks";
import { buildNotification } from "merchant-webhooks/testing";
import { describe, expect, it, vi } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { post } from "../support/notifications.js";

describe("ctx.event", () => {
  it.each([
    ["SUBSCRIPTION_CREATED", "onCreated", "subscription_event"],
    ["SUBSCRIPTION_RENEW", "onRenew", "renewal_event"],
    ["SUBSCRIPTION_CANCELLED", "onCancel", "unsubscription_event"],
    ["SUBSCRIPTION_SUSPENDED", "onSuspend", "suspended_event"],
    ["SUBSCRIPTION_RESUMED", "onResume", "resumed_event"],
  ] as const)("is the %s notification's %s object in %s", async (eventType, handlerKey, objectKey) => {
    const handler = vi.fn();
    const receiver = createReceiver({ logger: silentLogger(), [handlerKey]: handler });
    const body = buildNotification(eventType, undefined, { random: true });
    expect((await receiver.handle(post(body))).status).toBe(200);
    const ctx: HandlerContext = handler.mock.calls[0]![1];
    expect(ctx.event).toEqual(body.resource[objectKey]);
    expect(ctx.event).toBeDefined();
  });

  it("is undefined when the notification carries another object than its type names", async () => {
    const onCancel = vi.fn();
    const receiver = createReceiver({ logger: silentLogger(), onCancel });
    const body = buildNotification(
      "SUBSCRIPTION_CANCELLED",
      { resource: { unsubscription_event: undefined, suspended_event: { reason: "x" } } },
      { random: true },
    );
    await receiver.handle(post(body));
    expect(onCancel.mock.calls[0]![1].event).toBeUndefined();
  });

  it("in onUnknown and onAny of an unknown type, is whichever object the notification carries", async () => {
    const onUnknown = vi.fn();
    const onAny = vi.fn();
    const receiver = createReceiver({ logger: silentLogger(), onUnknown, onAny });
    const body = buildNotification(
      "SUBSCRIPTION_PAUSED",
      { resource: { suspended_event: { reason: "paused" } } },
      { random: true },
    );
    await receiver.handle(post(body));
    expect(onUnknown.mock.calls[0]![1].event).toEqual({ reason: "paused" });
    expect(onAny.mock.calls[0]![1].event).toEqual({ reason: "paused" });
  });
});
