import { createReceiver } from "merchant-webhooks";
import { describe, expect, it } from "vitest";
import { captureLogger } from "../support/capture-logger.js";
import { json, notification } from "../support/notifications.js";

const PAN = "4111 1111 1111 1111";
const LONG_KEY = `k${"x".repeat(20_000)}`;

/** A renewal whose merchant_metadata (a string map) has non-string values under attacker-chosen keys. */
function withBadKeys(keys: string[]) {
  const body = notification();
  body.resource.renewal_event.payment_detail.merchant_metadata = Object.fromEntries(keys.map((key) => [key, 1]));
  return body;
}

describe("validation messages never echo attacker text", () => {
  it("redacts card numbers in field paths, in the answer and in the log", async () => {
    const { logger, text } = captureLogger();
    const response = await createReceiver({ logger, onRenew: () => {} }).handle({
      method: "POST",
      headers: {},
      rawBody: json(withBadKeys([PAN])),
    });
    expect(response.status).toBe(400);
    expect(response.answer.message).toBe(
      "invalid notification: resource.renewal_event.payment_detail.merchant_metadata.[REDACTED]: expected string",
    );
    expect(text()).toContain("expected string");
    expect(text()).not.toContain(PAN);
  });

  it("shortens long keys, in the answer and in the log", async () => {
    const { logger, text } = captureLogger();
    const response = await createReceiver({ logger, onRenew: () => {} }).handle({
      method: "POST",
      headers: {},
      rawBody: json(withBadKeys([LONG_KEY])),
    });
    expect(response.status).toBe(400);
    expect(response.answer.message).toMatch(/merchant_metadata\.kx{31}…\(20001 characters\): expected string$/);
    expect(text().length).toBeLessThan(2_000);
  });

  it("does not log a long id of an invalid notification in full", async () => {
    const { logger, text } = captureLogger();
    const body = notification("SUBSCRIPTION_RENEW", "i".repeat(17_000));
    const response = await createReceiver({ logger, onRenew: () => {} }).handle({
      method: "POST",
      headers: {},
      rawBody: json(body),
    });
    expect(response.status).toBe(400);
    expect(text()).toContain("notification rejected");
    expect(text().length).toBeLessThan(2_000);
  });
});

describe("refused content types", () => {
  it("are logged card-redacted and shortened", async () => {
    const { logger, text } = captureLogger();
    const contentType = `text/plain; note=${PAN}; ${"p".repeat(8_000)}`;
    const response = await createReceiver({ logger, onRenew: () => {} }).handle({
      method: "POST",
      headers: { "content-type": contentType },
      rawBody: json(notification()),
    });
    expect(response.status).toBe(415);
    expect(text()).toContain("text/plain; note=");
    expect(text()).not.toContain(PAN);
    expect(text().length).toBeLessThan(2_000);
  });
});
