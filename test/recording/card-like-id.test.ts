import {
  createReceiver,
  memoryStore,
  type RecordedNotification,
  type SubscriptionNotification,
} from "merchant-webhooks";
import { replay } from "merchant-webhooks/testing";
import { describe, expect, it, vi } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { json, notification } from "../support/notifications.js";

// A random-looking notification id whose digits "32638105111479" pass the Luhn check: the scanner masks
// such a run in text, but a recording must replay as the notification it recorded, under its own id.
const CARD_LIKE_ID = "WH-C32638105111479BA3EB";

describe("a recording of a notification whose id holds a card-like run of digits", () => {
  it("keeps the id as sent, so its replay is that notification and a second replay a duplicate", async () => {
    const entries: RecordedNotification[] = [];
    const receiver = createReceiver({
      logger: silentLogger(),
      onRenew: () => {},
      record: { write: (e) => void entries.push(e) },
    });
    const body = { ...(notification() as SubscriptionNotification), id: CARD_LIKE_ID };
    const answer = await receiver.handle({
      method: "POST",
      headers: { "content-type": "application/json" },
      rawBody: json(body),
    });
    expect(answer.status).toBe(200);
    await receiver.close();

    expect(entries.map((entry) => entry.notification.id)).toEqual([CARD_LIKE_ID]);
    const onRenew = vi.fn();
    const store = memoryStore();
    await replay({ onRenew, idempotency: store }, entries);
    await replay({ onRenew, idempotency: store }, entries);
    expect(onRenew.mock.calls.map(([replayed]) => replayed.id)).toEqual([CARD_LIKE_ID]);
  });
});
