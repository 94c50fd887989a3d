import { createReceiver, type SubscriptionHandlers } from "merchant-webhooks";
import { describe, expect, it, vi } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { json, notification } from "../support/notifications.js";

const post = (body: Uint8Array) => ({ method: "POST", headers: { "content-type": "application/json" }, rawBody: body });

describe("dispatch by event_type", () => {
  it.each([
    ["SUBSCRIPTION_CREATED", "onCreated"],
    ["SUBSCRIPTION_RENEW", "onRenew"],
    ["SUBSCRIPTION_CANCELLED", "onCancel"],
    ["SUBSCRIPTION_SUSPENDED", "onSuspend"],
    ["SUBSCRIPTION_RESUMED", "onResume"],
    ["UNKNOWN", "onUnknown"],
    ["SUBSCRIPTION_PAUSED_IN_A_FUTURE_VERSION", "onUnknown"],
  ] as const)("%s goes to %s and no other handler", async (eventType, key) => {
    const handlers = {
      onCreated: vi.fn(),
      onRenew: vi.fn(),
      onCancel: vi.fn(),
      onSuspend: vi.fn(),
      onResume: vi.fn(),
      onUnknown: vi.fn(),
    } satisfies Required<SubscriptionHandlers>;
    const body = notification(eventType);
    const response = await createReceiver({ logger: silentLogger(), ...handlers }).handle(post(json(body)));
    expect(response.status).toBe(200);
    for (const [name, fn] of Object.entries(handlers)) {
      expect(fn, name).toHaveBeenCalledTimes(name === key ? 1 : 0);
    }
    const [received] = handlers[key].mock.calls[0]!;
    expect(received).toMatchObject({ id: body.id, event_type: eventType });
  });

  it("does not treat inherited property names as event types", async () => {
    const onUnknown = vi.fn();
    const response = await createReceiver({ logger: silentLogger(), onUnknown }).handle(
      post(json(notification("toString"))),
    );
    expect(response.status).toBe(200);
    expect(onUnknown).toHaveBeenCalledTimes(1);
  });
});
