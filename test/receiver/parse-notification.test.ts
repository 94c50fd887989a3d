import { hmacVerifier, NotificationError, parseNotification, type SubscriptionNotification } from "merchant-webhooks";
import { signHmac } from "merchant-webhooks/testing";
import { describe, expect, it } from "vitest";
import { json, notification } from "../support/notifications.js";

const JSON_HEADERS = { "content-type": "application/json" };
const HMAC = { secret: "parse-notification-secret", header: "x-signature" };

/** The error `parseNotification` throws for `body`, or a failure when it returns. */
async function refusal(
  body: Uint8Array | string,
  headers: Record<string, string> = JSON_HEADERS,
  options = {},
): Promise<NotificationError> {
  const err = await parseNotification(body, headers, options).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(err).toBeInstanceOf(NotificationError);
  return err as NotificationError;
}

describe("parseNotification", () => {
  it("returns the validated notification from bytes or text, unknown fields kept", async () => {
    const body = { ...notification(), delivery_attempt: 2 };
    const fromBytes: SubscriptionNotification = await parseNotification(json(body), JSON_HEADERS);
    expect(fromBytes).toEqual(body);
    expect(await parseNotification(JSON.stringify(body), new Headers(JSON_HEADERS))).toEqual(body);
  });

  it("verifies the exact bytes when verify is given", async () => {
    const bytes = json(notification());
    const verify = hmacVerifier(HMAC);
    const signed = { ...JSON_HEADERS, ...(await signHmac(bytes, HMAC)) };
    expect((await parseNotification(bytes, signed, { verify })).id).toBeTypeOf("string");
    const forged = await refusal(bytes, { ...signed, "x-signature": "0".repeat(64) }, { verify });
    expect(forged).toMatchObject({
      status: 401,
      reason: "no_signature_matched",
      message:
        'signature verification failed: 1 signature(s) in "x-signature" checked against 1 secret(s), none matched',
      answer: { processed: false, message: "signature verification failed" },
    });
  });

  it("checks the signature before parsing: unsigned garbage is 401, not 400", async () => {
    expect((await refusal("not json", JSON_HEADERS, { verify: hmacVerifier(HMAC) })).status).toBe(401);
  });

  it.each([
    ["not JSON", "{", 400, "body is not valid JSON"],
    ["not an object", "[1]", 400, "body must be a JSON object"],
    [
      "missing a required field",
      JSON.stringify({ ...notification(), id: undefined }),
      400,
      "invalid notification: id: required",
    ],
  ])("throws 400 with the receiver's message for a body %s", async (_case, body, status, message) => {
    expect(await refusal(body)).toMatchObject({ status, message });
  });

  it("names the failing field paths, never the values", async () => {
    const body = notification();
    body.resource.subscriber = { email: "4111111111111111" };
    const err = await refusal(JSON.stringify(body));
    expect(err.message).toBe("invalid notification: resource.subscriber.email: invalid email");
    expect(err.message).not.toContain("4111");
  });

  it("throws 415 for a content-type that is not JSON, and 413 past bodyLimit", async () => {
    const body = JSON.stringify(notification());
    expect(await refusal(body, { "content-type": "text/plain" })).toMatchObject({ status: 415 });
    expect(await refusal(body, JSON_HEADERS, { bodyLimit: 100 })).toMatchObject({
      status: 413,
      message: "body exceeds the limit of 100 bytes",
    });
  });

  it("is one error class, with the answer the receiver would send", async () => {
    const err = await refusal("{");
    expect(err.name).toBe("NotificationError");
    expect(err).toBeInstanceOf(Error);
    expect(err.answer).toEqual({ processed: false, message: err.message });
  });
});
