import { createReceiver, hmacVerifier, inProcessQueue, memoryStore } from "merchant-webhooks";
import { signHmac } from "merchant-webhooks/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { captureLogger } from "../support/capture-logger.js";
import { json, notification } from "../support/notifications.js";
import { type InstalledOtel, installOtel } from "../telemetry/fixtures/otel.js";

const SECRET = "span-test-secret-0123456789abcdef0123456789";
const PAN = "4111111111111111";
const PAN_AS_ID = "5555555555554444";
const CVC = "cvc-8812";
const signing = { header: "x-signature", secret: SECRET } as const;

/** A renewal whose card data, personal data and even ids are what must never be exported. */
function leakyRenewal() {
  const body = notification("SUBSCRIPTION_RENEW", PAN_AS_ID);
  body.resource.id = "378282246310005";
  Object.assign(body.resource.renewal_event.payment_detail.card_info, { cvc: CVC, card_number: PAN });
  body.resource.renewal_event.payment_detail.metadata = { note: `card ${PAN} cvc ${CVC}` };
  return body;
}

describe("span attributes and events", () => {
  let otel: InstalledOtel;
  beforeAll(() => {
    otel = installOtel();
  });
  afterAll(() => otel.uninstall());
  beforeEach(() => otel.spans.reset());

  it("never carry card data, verification data, personal data, the secret or signature headers", async () => {
    const body = leakyRenewal();
    const raw = json(body);
    const good = await signHmac(raw, signing);
    const expected = good["x-signature"]!;
    const forged = "f".repeat(64);
    for (const queue of [undefined, inProcessQueue()]) {
      const receiver = createReceiver({
        idempotency: memoryStore(),
        logger: captureLogger().logger,
        verify: hmacVerifier(signing),
        ...(queue ? { queue } : {}),
        onRenew: () => {
          throw new Error(`declined ${PAN} ${CVC} with ${SECRET} signed ${expected}`);
        },
      });
      const headers = { "content-type": "application/json" };
      // A forged signature (401), then the genuine one whose handler fails and quotes everything.
      expect(
        (await receiver.handle({ method: "POST", headers: { ...headers, "x-signature": forged }, rawBody: raw }))
          .status,
      ).toBe(401);
      await receiver.handle({ method: "POST", headers: { ...headers, ...good }, rawBody: raw });
      await receiver.close();
    }

    const spans = otel.spans.getFinishedSpans();
    expect(spans.map((span) => span.name)).toEqual(expect.arrayContaining(["webhook.receive", "webhook.handler"]));
    const exported = JSON.stringify(
      spans.map((span) => ({
        name: span.name,
        attributes: span.attributes,
        events: span.events,
        status: span.status,
        links: span.links,
        resource: span.resource.attributes,
      })),
    );
    const holder = body.resource.renewal_event.payment_detail.card_info.holder_name;
    for (const secret of [
      PAN,
      PAN_AS_ID,
      "378282246310005",
      CVC,
      SECRET,
      expected,
      forged,
      "x-signature",
      holder,
      body.resource.subscriber.email,
      body.resource.subscriber.name,
    ])
      expect(exported, secret).not.toContain(secret);
    // The ids that are card numbers are still there, masked: the span stays findable by outcome and type.
    const receive = spans.find((span) => span.name === "webhook.receive" && span.attributes["webhook.attempt"]);
    expect(receive?.attributes["webhook.notification.id"]).toBe("[REDACTED]");
    expect(receive?.attributes["webhook.subscription.id"]).toBe("[REDACTED]");
  });

  it("keep ordinary ids as they are", async () => {
    const body = notification("SUBSCRIPTION_RENEW");
    const receiver = createReceiver({ idempotency: memoryStore(), logger: captureLogger().logger, onRenew: () => {} });
    await receiver.handle({ method: "POST", headers: { "content-type": "application/json" }, rawBody: json(body) });
    const [receive] = otel.finished("webhook.receive");
    expect(receive!.attributes["webhook.notification.id"]).toBe(body.id);
    expect(receive!.attributes["webhook.subscription.id"]).toBe(body.resource.id);
  });
});
