import { randomBytes } from "node:crypto";
import {
  hmacVerifier,
  NotificationError,
  parseNotification,
  standardWebhooksVerifier,
  type VerifyHook,
} from "merchant-webhooks";
import { signHmac, signStandardWebhook } from "merchant-webhooks/testing";
import { describe, expect, it } from "vitest";
import { sealingKey } from "../../src/worker/seal.js";
import { json, notification } from "../support/notifications.js";

const JSON_TYPE = { "content-type": "application/json" };
const HMAC_SECRET = "confusion-test-secret-0123456789";
const KEY = randomBytes(32);
const STANDARD_SECRET = `whsec_${KEY.toString("base64")}`;
const body = json(notification());
const nowSeconds = () => Math.floor(Date.now() / 1000);

async function reasonFor(headers: Record<string, string>, verify: VerifyHook): Promise<NotificationError> {
  const error = await parseNotification(body, { ...JSON_TYPE, ...headers }, { verify }).catch((err: unknown) => err);
  expect(error).toBeInstanceOf(NotificationError);
  return error as NotificationError;
}

describe("weak keys are refused at construction, saying why", () => {
  it('a 1-byte HMAC secret ("x") and one under 16 bytes', () => {
    expect(() => hmacVerifier({ secret: "x", header: "x-signature" })).toThrow(
      'hmacVerifier: a secret of 1 byte(s) is too short to resist guessing; use at least 16 random bytes (e.g. crypto.randomBytes(32).toString("base64url"))',
    );
    expect(() => hmacVerifier({ secret: ["long-enough-secret-0123", "short"], header: "x-signature" })).toThrow(
      /5 byte/,
    );
    expect(() => hmacVerifier({ secret: "sixteen-bytes-ok", header: "x-signature" })).not.toThrow();
  });

  it("whsec_AA== (1 byte) and malformed whsec_ base64", () => {
    expect(() => standardWebhooksVerifier("whsec_AA==")).toThrow(
      "standardWebhooksVerifier: a secret of 1 byte(s) is too short to resist guessing; use at least 24 random bytes",
    );
    expect(() => standardWebhooksVerifier("whsec_not*base64")).toThrow(/not valid base64/);
    expect(() => standardWebhooksVerifier("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")).not.toThrow(); // the spec's 24 bytes
  });

  it('encryptionKey: "a".repeat(43), characters outside base64, and one repeated byte', () => {
    expect(() => sealingKey("a".repeat(43))).toThrow(
      /not valid base64 of 32 bytes \(43 characters; 32 bytes are 44 with padding\)/,
    );
    const good = KEY.toString("base64");
    expect(() => sealingKey(`${good.slice(0, 10)}!${good.slice(10)}`)).toThrow(/characters outside base64/);
    expect(() => sealingKey(good.slice(0, 40))).toThrow(/must be 32 bytes|not valid base64/);
    expect(() => sealingKey(Buffer.alloc(32, 7))).toThrow(/one byte repeated 32 times/);
    expect(sealingKey(good).key.equals(KEY)).toBe(true);
    expect(sealingKey(KEY.toString("base64url")).key.equals(KEY)).toBe(true);
  });

  it("the error never shows the key", () => {
    const text = `${"Z".repeat(43)}`;
    try {
      sealingKey(text);
    } catch (err) {
      expect(String(err)).not.toContain(text);
    }
  });
});

describe("timestamps far in the future in signature headers", () => {
  const hmac = { secret: HMAC_SECRET, header: "x-signature", timestamp: { header: "x-timestamp" } };
  // Timestamps taken when each test runs: a loaded machine may take seconds to reach it.
  const futures: Array<[string, () => number]> = [
    ["400 s ahead", () => nowSeconds() + 400],
    ["10 years ahead", () => nowSeconds() + 86_400 * 365 * 10],
    ["the largest 11-digit second", () => 99_999_999_999],
  ];

  it.each(futures)("HMAC: a signature correctly made %s is refused, saying how far ahead", async (_, at) => {
    const error = await reasonFor(await signHmac(body, hmac, { timestamp: at() }), hmacVerifier(hmac));
    expect(error.reason).toBe("timestamp_outside_tolerance");
    expect(error.message).toMatch(/s in the future/);
  });

  it.each(futures)("Standard Webhooks: a signature correctly made %s is refused", async (_, at) => {
    const headers = await signStandardWebhook(body, STANDARD_SECRET, { timestamp: at() });
    const error = await reasonFor(headers, standardWebhooksVerifier(STANDARD_SECRET));
    expect(error.reason).toBe("timestamp_outside_tolerance");
  });

  it("values that are not whole seconds never pass: 13 digits, exponent, sign, fraction, padding", async () => {
    const signed = await signHmac(body, hmac);
    for (const weird of ["1e12", "+1700000000", "-1", "1700000000.5", " 1700000000", "0x65000000", "9".repeat(13)]) {
      const headers = { ...signed, "x-timestamp": weird };
      expect((await reasonFor(headers, hmacVerifier(hmac))).reason).toBe("malformed_timestamp");
      const std = { ...(await signStandardWebhook(body, STANDARD_SECRET)), "webhook-timestamp": weird };
      expect((await reasonFor(std, standardWebhooksVerifier(STANDARD_SECRET))).reason).toBe("malformed_timestamp");
    }
  });
});

describe("header confusion between the HMAC and Standard Webhooks schemes", () => {
  it("a Standard Webhooks delivery sent to an HMAC receiver names the scheme it carries", async () => {
    const headers = await signStandardWebhook(body, STANDARD_SECRET);
    const error = await reasonFor(headers, hmacVerifier({ secret: HMAC_SECRET, header: "x-signature" }));
    expect(error.reason).toBe("no_signature_header");
    expect(error.message).toMatch(
      /carries "webhook-signature" \(a Standard Webhooks sender: use standardWebhooksVerifier\)/,
    );
  });

  it("an HMAC delivery sent to a Standard Webhooks receiver names the header it carries", async () => {
    const headers = await signHmac(body, { secret: HMAC_SECRET, header: "x-signature" });
    const error = await reasonFor(headers, standardWebhooksVerifier(STANDARD_SECRET));
    expect(error.reason).toBe("no_signature_header");
    expect(error.message).toMatch(/no "webhook-signature" header; the delivery carries "x-signature"/);
  });

  it("an HMAC of the body alone, under the same key, in webhook-signature does not pass", async () => {
    const { createHmac } = await import("node:crypto");
    const plain = createHmac("sha256", KEY).update(body).digest("base64");
    const headers = { ...(await signStandardWebhook(body, STANDARD_SECRET)), "webhook-signature": `v1,${plain}` };
    expect((await reasonFor(headers, standardWebhooksVerifier(STANDARD_SECRET))).reason).toBe("no_signature_matched");
  });

  it("a Standard Webhooks signature moved into an HMAC header (same key, base64, v1, prefix) does not pass", async () => {
    const std = await signStandardWebhook(body, STANDARD_SECRET);
    const bare = std["webhook-signature"]!.slice(3);
    const verify = hmacVerifier({ secret: KEY, header: "webhook-signature", encoding: "base64" });
    expect((await reasonFor({ ...std, "webhook-signature": bare }, verify)).reason).toBe("no_signature_matched");
    const prefixed = hmacVerifier({ secret: KEY, header: "webhook-signature", encoding: "base64", prefix: "v1," });
    // The HMAC verifier splits on commas, so "v1,<sig>" never reads as one prefixed entry.
    expect((await reasonFor(std, prefixed)).reason).toBe("unknown_scheme");
  });

  it("webhook-* and svix-* headers are never mixed: a svix signature beside a webhook-id is not read", async () => {
    const std = await signStandardWebhook(body, STANDARD_SECRET);
    const mixed = {
      "webhook-id": std["webhook-id"]!,
      "webhook-timestamp": std["webhook-timestamp"]!,
      "svix-signature": std["webhook-signature"]!,
    };
    expect((await reasonFor(mixed, standardWebhooksVerifier(STANDARD_SECRET))).reason).toBe("no_signature_header");
    const svix = {
      "svix-id": std["webhook-id"]!,
      "svix-timestamp": std["webhook-timestamp"]!,
      "svix-signature": std["webhook-signature"]!,
    };
    expect(
      await parseNotification(body, { ...JSON_TYPE, ...svix }, { verify: standardWebhooksVerifier(STANDARD_SECRET) }),
    ).toBeTruthy();
    const staleSvix = { ...svix, "webhook-timestamp": String(nowSeconds()) };
    expect(
      await parseNotification(
        body,
        { ...JSON_TYPE, ...staleSvix },
        { verify: standardWebhooksVerifier(STANDARD_SECRET) },
      ),
    ).toBeTruthy();
  });

  it("an HMAC verifier with a timestamp reads only its own timestamp header, not webhook-timestamp", async () => {
    const hmac = { secret: HMAC_SECRET, header: "x-signature", timestamp: { header: "x-timestamp" } };
    const signed = await signHmac(body, hmac, { timestamp: nowSeconds() - 10_000 });
    const withFresh = { ...signed, "webhook-timestamp": String(nowSeconds()) };
    expect((await reasonFor(withFresh, hmacVerifier(hmac))).reason).toBe("timestamp_outside_tolerance");
  });
});
