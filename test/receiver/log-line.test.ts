import { createReceiver, memoryStore } from "merchant-webhooks";
import { describe, expect, it } from "vitest";
import { captureLogger } from "../support/capture-logger.js";
import { notification } from "../support/notifications.js";

const post = (text: string) => ({
  method: "POST",
  headers: { "content-type": "application/json" },
  rawBody: new TextEncoder().encode(text),
});
const PINO = ["level", "time", "pid", "hostname", "msg"];
/** The line's own fields, pino's left out, sorted: which fields a line holds, whatever their order. */
const fieldsOf = (line: Record<string, unknown>) =>
  Object.keys(line)
    .filter((key) => !PINO.includes(key))
    .sort();

describe("the one log line per notification", () => {
  it("holds the verdict's fields and the outcome, status and duration, and no field left empty", async () => {
    const { logger, lines } = captureLogger();
    const receiver = createReceiver({
      logger,
      idempotency: memoryStore(),
      onRenew: (renewal) => {
        if (renewal.id.endsWith("-fails")) throw new Error("handler broke");
      },
    });
    const renewal = notification();
    await receiver.handle(post(JSON.stringify(renewal)));
    await receiver.handle(post(JSON.stringify(renewal)));
    await receiver.handle(post('{"id": 1'));
    await receiver.handle(post(JSON.stringify({ ...renewal, id: `${renewal.id}-fails` })));
    const [processed, duplicate, invalid, failed] = lines();

    const notificationFields = ["event_type", "merchant_id", "notification_id", "subscription_id"];
    expect(fieldsOf(processed!)).toEqual(
      [...notificationFields, "attempt", "duration_ms", "in_flight", "outcome", "status"].sort(),
    );
    expect(processed).toMatchObject({
      notification_id: renewal.id,
      event_type: "SUBSCRIPTION_RENEW",
      merchant_id: renewal.resource.merchant_id,
      subscription_id: renewal.resource.id,
      outcome: "processed",
      status: 200,
      msg: "notification handled",
    });
    expect(typeof processed!.duration_ms).toBe("number");
    expect(duplicate).toMatchObject({ notification_id: renewal.id, outcome: "duplicate", status: 200 });
    expect(fieldsOf(invalid!)).toEqual(["duration_ms", "in_flight", "outcome", "reason", "status"]);
    expect(invalid).toMatchObject({ outcome: "invalid", status: 400, msg: "notification rejected" });
    expect(fieldsOf(failed!)).toEqual(
      [...notificationFields, "attempt", "duration_ms", "err", "in_flight", "outcome", "status"].sort(),
    );
    expect(failed).toMatchObject({ attempt: 1, status: 500, err: { message: "handler broke" } });
  });
});
