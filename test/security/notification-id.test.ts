import { describe, expect, it, vi } from "vitest";
import { createReceiver, subscriptionNotificationSchema } from "merchant-webhooks";
import { MAX_NOTIFICATION_ID_LENGTH } from "merchant-webhooks/schema";
import { silentLogger } from "../support/capture-logger.js";
import { notification } from "../support/notifications.js";

/** The body as a sender writes it, `\u` escapes included: JSON.stringify would keep them too. */
function bodyWithId(id: string): Uint8Array {
  return new TextEncoder().encode(JSON.stringify(notification("SUBSCRIPTION_RENEW", id)));
}

async function deliver(receiver: ReturnType<typeof createReceiver>, id: string) {
  const response = await receiver.handle({ method: "POST", headers: {}, rawBody: bodyWithId(id) });
  return { status: response.status, ...response.answer };
}

async function expectRefused(receiver: ReturnType<typeof createReceiver>, ids: string[], rule: string) {
  for (const id of ids)
    expect(await deliver(receiver, id)).toEqual({
      status: 400,
      processed: false,
      message: `invalid notification: id: ${rule}`,
    });
}

describe("the notification id", () => {
  it("refuses ids that are not well-formed Unicode with 400, so they never share a key with U+FFFD", async () => {
    const onRenew = vi.fn();
    const receiver = createReceiver({ logger: silentLogger(), onRenew });
    await expectRefused(
      receiver,
      ["x\ud800", "x\udbff", "\udc00x"],
      "must be well-formed Unicode (no lone surrogates)",
    );
    expect(await deliver(receiver, "x\ufffd")).toMatchObject({ status: 200, processed: true });
    // a surrogate pair is well-formed and its own id
    expect(await deliver(receiver, "x\ud83d\ude00")).toMatchObject({ status: 200, processed: true });
    expect(onRenew.mock.calls.map(([n]) => n.id)).toEqual(["x\ufffd", "x\ud83d\ude00"]);
  });

  it("refuses an id with a NUL character with 400 on every store (PostgreSQL's text cannot hold one)", async () => {
    const onRenew = vi.fn();
    const receiver = createReceiver({ logger: silentLogger(), onRenew });
    await expectRefused(receiver, ["x\u0000", "\u0000", "a\u0000b"], "must not contain a NUL character (U+0000)");
    expect(onRenew).not.toHaveBeenCalled();
  });

  it(`is at most ${MAX_NOTIFICATION_ID_LENGTH} characters; longer ids get 400`, async () => {
    const onRenew = vi.fn();
    const receiver = createReceiver({ logger: silentLogger(), onRenew });
    expect(await deliver(receiver, "a".repeat(MAX_NOTIFICATION_ID_LENGTH))).toMatchObject({
      status: 200,
      processed: true,
    });
    expect(await deliver(receiver, "b".repeat(17_000))).toEqual({
      status: 400,
      processed: false,
      message: `invalid notification: id: at most ${MAX_NOTIFICATION_ID_LENGTH} characters`,
    });
    expect(onRenew).toHaveBeenCalledTimes(1);
    expect(
      subscriptionNotificationSchema.safeParse(
        notification("SUBSCRIPTION_RENEW", "c".repeat(MAX_NOTIFICATION_ID_LENGTH + 1)),
      ).success,
    ).toBe(false);
  });
});
