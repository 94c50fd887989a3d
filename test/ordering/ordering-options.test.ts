import { buildNotification } from "merchant-webhooks/testing";
import { describe, expect, it } from "vitest";
import { resolveOrdering } from "../../src/receiver/options.js";

const renewal = (resource: Record<string, unknown> = {}) =>
  buildNotification("SUBSCRIPTION_RENEW", { resource }, { random: true });

describe("resolveOrdering", () => {
  it("is off unless asked for", () => {
    expect(resolveOrdering(undefined)).toBeUndefined();
    expect(resolveOrdering(false, () => {})).toBeUndefined();
  });

  it("orders by subscription (merchant and id) at update_time, else create_time", () => {
    const ordering = resolveOrdering(true)!;
    const notification = renewal({ merchant_id: "M-1", id: "SUB-1", update_time: "2026-03-01T10:00:00.250+08:00" });
    expect(ordering.orderOf(notification)).toEqual({ key: "M-1:SUB-1", position: "2026-03-01T02:00:00.25" });
    const created = renewal({
      merchant_id: "M-1",
      id: "SUB-1",
      update_time: undefined,
      create_time: "2026-03-01T02:00:00Z",
    });
    expect(ordering.orderOf(created)).toEqual({ key: "M-1:SUB-1", position: "2026-03-01T02:00:00" });
    const timeless = renewal({ merchant_id: "M-1", id: "SUB-1", update_time: undefined, create_time: undefined });
    expect(ordering.orderOf(timeless)).toEqual({ key: "M-1:SUB-1" });
  });

  it("keeps subscriptions apart when their parts would join alike", () => {
    const ordering = resolveOrdering(true)!;
    const a = ordering.orderOf(renewal({ merchant_id: "M:1", id: "S" }))!.key;
    const b = ordering.orderOf(renewal({ merchant_id: "M", id: "1:S" }))!.key;
    expect(a).not.toBe(b);
  });

  it("leaves a notification without a subscription id unordered, and an event without a resource", () => {
    expect(resolveOrdering(true)!.orderOf(renewal({ id: undefined }))).toBeUndefined();
    // What an `eventReceiverOptions` schema may pass on: an event of another kind, with no subscription resource.
    expect(resolveOrdering(true)!.orderOf({ id: "ORDER-EVT-1", event_type: "ORDER_PAID" } as never)).toBeUndefined();
  });

  it("takes the key and the position from the object form, and onStale from the top level", () => {
    const onStale = () => {};
    const ordering = resolveOrdering(
      { key: (n) => n.resource.reference_id, position: () => new Date(Date.UTC(2026, 2, 1, 2)) },
      onStale,
    )!;
    expect(ordering.orderOf(renewal({ reference_id: "ref-9" }))).toEqual({
      key: "ref-9",
      position: "2026-03-01T02:00:00",
    });
    expect(ordering.onStale).toBe(onStale);
  });

  it("refuses ordering.onStale (where it stood before 0.1.0) and unknown keys, naming the fix", () => {
    const onStale = () => {};
    expect(() => resolveOrdering({ onStale } as never, onStale)).toThrow(
      "ordering.onStale: give onStale beside the other handlers",
    );
    expect(() => resolveOrdering({ positon: () => undefined } as never)).toThrow(
      'ordering: unknown option "positon". Did you mean "position"?',
    );
  });

  it("serialises but never stales a notification whose position is not a date-time", () => {
    const ordering = resolveOrdering({ position: () => "yesterday" })!;
    expect(ordering.orderOf(renewal({ merchant_id: "M", id: "S" }))).toEqual({ key: "M:S" });
  });

  it("refuses options of the wrong type at start-up, naming them", () => {
    expect(() => resolveOrdering("yes" as never)).toThrow("ordering must be true, false or an object");
    expect(() => resolveOrdering({ key: "resource.id" as never })).toThrow("ordering.key must be a function");
    expect(() => resolveOrdering(true, "log" as never)).toThrow("onStale must be a function");
  });
});
