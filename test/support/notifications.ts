import { readFileSync } from "node:fs";
import { expect } from "vitest";

const renewal = JSON.parse(readFileSync(new URL("../fixtures/renewal.json", import.meta.url), "utf8")) as Record<
  string,
  any
>;

const EVENT_OBJECTS: Record<string, string> = {
  SUBSCRIPTION_CREATED: "subscription_event",
  SUBSCRIPTION_RENEW: "renewal_event",
  SUBSCRIPTION_CANCELLED: "unsubscription_event",
  SUBSCRIPTION_SUSPENDED: "suspended_event",
  SUBSCRIPTION_RESUMED: "resumed_event",
};

let counter = 0;

/** A valid notification of `eventType`, with a fresh id unless one is given. */
export function notification(
  eventType = "SUBSCRIPTION_RENEW",
  id = `evt-${process.pid}-${Date.now()}-${++counter}`,
): Record<string, any> {
  const copy = structuredClone(renewal);
  copy.id = id;
  copy.event_type = eventType;
  if (eventType !== "SUBSCRIPTION_RENEW") {
    const key = EVENT_OBJECTS[eventType];
    const event = copy.resource.renewal_event;
    delete copy.resource.renewal_event;
    if (key === "subscription_event") copy.resource[key] = event;
    else if (key === "unsubscription_event")
      copy.resource[key] = { reason: "user request", unsubscription_time: "2026-11-23T10:00:00Z" };
    else if (key === "suspended_event")
      copy.resource[key] = { reason: "payment failed", suspended_time: "2026-11-23T10:00:00Z" };
    else if (key === "resumed_event") copy.resource[key] = { resumed_time: "2026-11-23T10:00:00Z" };
  }
  return copy;
}

export const json = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));

/**
 * Deliver `notification` to `receiver` as a sender would until it is answered 200, sending it again
 * after `pauseMs` on a 409 (its subscription busy); any other answer fails the test.
 */
export async function deliverUntilAccepted(
  receiver: {
    handle(request: {
      method: string;
      headers: Record<string, string>;
      rawBody: Uint8Array;
    }): Promise<{ status: number }>;
  },
  notification: unknown,
  pauseMs: number,
): Promise<void> {
  const request = { method: "POST", headers: { "content-type": "application/json" }, rawBody: json(notification) };
  for (;;) {
    const { status } = await receiver.handle(request);
    if (status === 200) return;
    expect(status).toBe(409);
    await new Promise((resolve) => setTimeout(resolve, pauseMs));
  }
}

/** `body` as the platform posts it: the request `receiver.handle` takes. */
export const post = (body: unknown) => ({
  method: "POST",
  headers: { "content-type": "application/json" },
  rawBody: json(body),
});

/** Deliver `body` to `receiver` once: the HTTP status it is answered with. */
export async function deliveredStatus(
  receiver: { handle(request: ReturnType<typeof post>): Promise<{ status: number }> },
  body: unknown,
): Promise<number> {
  return (await receiver.handle(post(body))).status;
}
