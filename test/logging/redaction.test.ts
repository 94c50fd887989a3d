import { createReceiver, REDACTED, redactNotification } from "merchant-webhooks";
import { describe, expect, it } from "vitest";
import { captureLogger } from "../support/capture-logger.js";
import { json, notification } from "../support/notifications.js";

const PAN = "4111111111111111";

function withSecrets() {
  const body = notification();
  const detail = body.resource.renewal_event.payment_detail;
  detail.card_info = { ...detail.card_info, cvc: "987", card_pwd: "4321", card_md5: "0f1e2d", card_hash: "hash-xyz" };
  detail.metadata = { note: `customer typed ${PAN} into the memo` };
  return body;
}

describe("redaction", () => {
  it("writes one line per notification with the ids, outcome, status and duration, and no card data", async () => {
    const { logger, lines, text } = captureLogger();
    const body = withSecrets();
    await createReceiver({ logger, onRenew: () => {} }).handle({ method: "POST", headers: {}, rawBody: json(body) });
    const line = lines().find((l) => l.msg === "notification handled");
    expect(line).toMatchObject({
      notification_id: body.id,
      event_type: "SUBSCRIPTION_RENEW",
      merchant_id: body.resource.merchant_id,
      subscription_id: body.resource.id,
      outcome: "processed",
      status: 200,
    });
    expect(typeof line!.duration_ms).toBe("number");
    // Every field but the line's clock, process id and duration, and the generated notification id:
    // digits that may hold 987 by chance. Unquoted, so a code written into a message is found too.
    const logged = lines()
      .map(({ time: _time, pid: _pid, duration_ms: _duration, ...fields }) => JSON.stringify(fields))
      .join("\n")
      .replaceAll(body.id, "<id>");
    expect(logged).not.toContain("987");
    expect(text()).not.toContain(PAN);
  });

  it("redacts card secrets, card numbers and personal data a handler logs through ctx.log", async () => {
    const { logger, text } = captureLogger();
    const body = withSecrets();
    const receiver = createReceiver({
      logger,
      onRenew: (notification, ctx) => {
        ctx.log.info({ notification }, "received");
        ctx.log.info({ card_info: notification.resource.renewal_event?.payment_detail?.card_info }, "card");
        ctx.log.info({ cvc: "987" }, "direct");
      },
    });
    await receiver.handle({ method: "POST", headers: {}, rawBody: json(body) });
    const out = text();
    expect(out).toContain('"msg":"received"');
    expect(out).toContain(REDACTED);
    for (const secret of [
      '"987"',
      '"4321"',
      "0f1e2d",
      "hash-xyz",
      PAN,
      body.resource.subscriber.email,
      body.resource.subscriber.name,
    ]) {
      expect(out).not.toContain(secret);
    }
    // what is not sensitive stays readable
    expect(out).toContain(body.resource.renewal_event.payment_detail.card_info.card_mask);
  });

  it("keeps personal data when pii redaction is turned off, never card secrets", () => {
    const body = withSecrets();
    const out = redactNotification(body, { pii: false });
    expect(out.resource.subscriber.email).toBe(body.resource.subscriber.email);
    expect(out.resource.renewal_event.payment_detail.card_info.cvc).toBe(REDACTED);
    expect(out.resource.renewal_event.payment_detail.metadata.note).toBe(`customer typed ${REDACTED} into the memo`);
    expect(body.resource.renewal_event.payment_detail.card_info.cvc).toBe("987"); // input untouched
  });

  it("leaves epoch times alone even when their digits happen to pass the Luhn check, and ids that are no card number", () => {
    const out = redactNotification({
      order_id: "4111111111111112",
      trace_id: "ORD-4111111111111",
      next_execution_time: 4111111111111,
      amount: 4111111111111111,
    });
    expect(out).toEqual({
      order_id: "4111111111111112",
      trace_id: "ORD-4111111111111",
      next_execution_time: 4111111111111,
      amount: REDACTED,
    });
  });

  it("redacts an id that is a card number: an id is no excuse", () => {
    const out = redactNotification({ payer_id: PAN, order_id: "4111-1111-1111-1111", id: 4111111111111111 });
    expect(out).toEqual({ payer_id: REDACTED, order_id: REDACTED, id: REDACTED });
  });

  it("keeps loopback addresses in text, so a connection error says where it tried; other IPs go", () => {
    const redacted = redactNotification({
      err: "connect ECONNREFUSED 127.0.0.1:6379; connect ECONNREFUSED ::1:5432; [0:0:0:0:0:0:0:1]:5432",
      note: "payer at 203.0.113.7 and 2001:db8::7, or 10.0.0.5:6379",
    });
    expect(redacted.err).toBe(
      "connect ECONNREFUSED 127.0.0.1:6379; connect ECONNREFUSED ::1:5432; [0:0:0:0:0:0:0:1]:5432",
    );
    expect(redacted.note).toBe(`payer at ${REDACTED} and ${REDACTED}, or ${REDACTED}:6379`);
  });
});
