import { standardWebhooksVerifier } from "merchant-webhooks";
import { signStandardWebhook } from "merchant-webhooks/testing";
import { afterEach, describe, expect, it, vi } from "vitest";

/*
 * The example vector of the Standard Webhooks reference implementation,
 * standard-webhooks/standard-webhooks, libraries/javascript/src/webhook.test.ts, test "sign function works":
 *
 *   const key = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
 *   const msgId = "msg_p5jXN8AQM9LWM0D4loKWxJek";
 *   const timestamp = new Date(1614265330 * 1000);
 *   const payload = '{"test": 2432232314}';
 *   const expected = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";
 *
 * The same file uses the secret without its prefix ("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw") and expects both
 * forms to verify, ignores entries of other versions in a multi-signature header, and refuses timestamps
 * more than 5 minutes old or ahead.
 */
const SPEC = {
  secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
  id: "msg_p5jXN8AQM9LWM0D4loKWxJek",
  timestamp: 1614265330,
  payload: '{"test": 2432232314}',
  signature: "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
} as const;

const payload = new TextEncoder().encode(SPEC.payload);
const specHeaders = (overrides: Record<string, string> = {}): Record<string, string> => ({
  "webhook-id": SPEC.id,
  "webhook-timestamp": String(SPEC.timestamp),
  "webhook-signature": SPEC.signature,
  ...overrides,
});
/** Verify at the moment the specification's example was signed, plus `offsetSeconds`. */
const atSpecTime = (offsetSeconds = 0) => vi.useFakeTimers({ now: (SPEC.timestamp + offsetSeconds) * 1000 });

afterEach(() => vi.useRealTimers());

describe("standardWebhooksVerifier", () => {
  it("accepts the specification's example vector", async () => {
    atSpecTime();
    expect(await standardWebhooksVerifier(SPEC.secret)(payload, specHeaders())).toBe(true);
  });

  it("accepts the secret with or without the whsec_ prefix, or as bytes", async () => {
    atSpecTime();
    const raw = SPEC.secret.slice("whsec_".length);
    expect(await standardWebhooksVerifier(raw)(payload, specHeaders())).toBe(true);
    expect(await standardWebhooksVerifier(Buffer.from(raw, "base64"))(payload, specHeaders())).toBe(true);
  });

  it("signs the specification's example to the expected signature", async () => {
    const headers = await signStandardWebhook(SPEC.payload, SPEC.secret, { id: SPEC.id, timestamp: SPEC.timestamp });
    expect(headers).toEqual(specHeaders());
  });

  it("accepts a header listing several signatures, ignoring other versions, when one matches", async () => {
    atSpecTime();
    const signatures = [
      "v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=",
      "v2,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=",
      SPEC.signature,
      "v1a,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
    ].join(" ");
    const verify = standardWebhooksVerifier(SPEC.secret);
    expect(await verify(payload, specHeaders({ "webhook-signature": signatures }))).toBe(true);
    // The right bytes under another version label do not count.
    expect(await verify(payload, specHeaders({ "webhook-signature": SPEC.signature.replace("v1,", "v2,") }))).toBe(
      false,
    );
  });

  it.each([
    ["the id differs", { "webhook-id": "msg_other" }],
    ["the timestamp differs", { "webhook-timestamp": String(SPEC.timestamp + 1) }],
    ["the signature is garbage", { "webhook-signature": "v1,dawfeoifkpqwoekfpqoekf" }],
    ["the signature is cut short", { "webhook-signature": SPEC.signature.slice(0, 8) }],
    ["the signature is empty", { "webhook-signature": "v1," }],
    ["the timestamp is not a number", { "webhook-timestamp": "hello" }],
  ])("fails when %s", async (_case, overrides) => {
    atSpecTime();
    expect(await standardWebhooksVerifier(SPEC.secret)(payload, specHeaders(overrides))).toBe(false);
  });

  it.each(["webhook-id", "webhook-timestamp", "webhook-signature"])("fails when %s is missing", async (name) => {
    atSpecTime();
    const headers = specHeaders();
    delete headers[name];
    expect(await standardWebhooksVerifier(SPEC.secret)(payload, headers)).toBe(false);
  });

  it("fails when the payload differs by one space", async () => {
    atSpecTime();
    const reserialized = new TextEncoder().encode(JSON.stringify(JSON.parse(SPEC.payload)));
    expect(await standardWebhooksVerifier(SPEC.secret)(reserialized, specHeaders())).toBe(false);
  });

  it.each([
    ["5 minutes old", -300, true],
    ["5 minutes ahead", 300, true],
    ["5 minutes and 1 second old", -301, false],
    ["5 minutes and 1 second ahead", 301, false],
  ])("a delivery signed %s: %s", async (_case, offset, accepted) => {
    // The clock moves instead of the timestamp, so the signature stays the specification's own.
    atSpecTime(-offset);
    expect(await standardWebhooksVerifier(SPEC.secret)(payload, specHeaders())).toBe(accepted);
  });

  it("takes a configured tolerance", async () => {
    atSpecTime(3600);
    expect(await standardWebhooksVerifier(SPEC.secret, { toleranceSeconds: 3600 })(payload, specHeaders())).toBe(true);
    expect(await standardWebhooksVerifier(SPEC.secret, { toleranceSeconds: 3599 })(payload, specHeaders())).toBe(false);
  });

  it("passes with any of several secrets while one is rotated", async () => {
    atSpecTime();
    const other = `whsec_${Buffer.from("a brand new secret of 24+ bytes").toString("base64")}`;
    expect(await standardWebhooksVerifier([other, SPEC.secret])(payload, specHeaders())).toBe(true);
    expect(await standardWebhooksVerifier([other])(payload, specHeaders())).toBe(false);
  });

  it("accepts the same delivery under Svix's header names", async () => {
    atSpecTime();
    const svix = { "svix-id": SPEC.id, "svix-timestamp": String(SPEC.timestamp), "svix-signature": SPEC.signature };
    const verify = standardWebhooksVerifier(SPEC.secret);
    expect(await verify(payload, svix)).toBe(true);
    expect(await verify(payload, { ...svix, "svix-id": "msg_other" })).toBe(false);
  });

  it("reads the three headers from one family, never a mix of webhook-* and svix-*", async () => {
    atSpecTime();
    const verify = standardWebhooksVerifier(SPEC.secret);
    // webhook-id present: the webhook-* family is used, and its signature is missing.
    const mixed = {
      "webhook-id": SPEC.id,
      "webhook-timestamp": String(SPEC.timestamp),
      "svix-signature": SPEC.signature,
    };
    expect(await verify(payload, mixed)).toBe(false);
  });

  it("refuses a secret it cannot decode, at start-up", () => {
    expect(() => standardWebhooksVerifier("whsec_not base64!")).toThrow(/whsec_/);
    expect(() => standardWebhooksVerifier("")).toThrow(/secret/);
    expect(() => standardWebhooksVerifier([])).toThrow(/secret/);
  });
});
