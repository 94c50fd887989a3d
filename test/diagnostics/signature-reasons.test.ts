import {
  createReceiver,
  type HmacVerifierOptions,
  hmacVerifier,
  NotificationError,
  parseNotification,
  standardWebhooksVerifier,
  type VerifyHook,
} from "merchant-webhooks";
import { signHmac, signStandardWebhook } from "merchant-webhooks/testing";
import { describe, expect, it } from "vitest";
import { captureLogger } from "../support/capture-logger.js";
import { json, notification } from "../support/notifications.js";

const SECRET = "diagnostics-secret-0123456789";
const OLD_SECRET = "diagnostics-old-secret-0123456789";
const STANDARD_SECRET = `whsec_${Buffer.from("diagnostics standard secret, 32 b").toString("base64")}`;
const HMAC: HmacVerifierOptions = { secret: SECRET, header: "x-signature", timestamp: { header: "x-timestamp" } };
const JSON_TYPE = { "content-type": "application/json" };
const nowSeconds = () => Math.floor(Date.now() / 1000);

/** A receiver with a captured log, and one POST through it. */
async function post(verify: VerifyHook, headers: Record<string, string>, body: Uint8Array, extra = {}) {
  const { logger, lines, text } = captureLogger();
  const receiver = createReceiver({ logger, verify, onRenew: () => {}, ...extra });
  const response = await receiver.handle({ method: "POST", headers: { ...JSON_TYPE, ...headers }, rawBody: body });
  const line = lines().find((one) => one.outcome !== undefined)!;
  return { response, line, lines, text };
}

async function refusal(body: Uint8Array, headers: Record<string, string>, verify: VerifyHook) {
  try {
    await parseNotification(body, { ...JSON_TYPE, ...headers }, { verify });
  } catch (err) {
    expect(err).toBeInstanceOf(NotificationError);
    return err as NotificationError;
  }
  throw new Error("parseNotification accepted the delivery");
}

describe("a failed signature check says why, in the log line and on the error", () => {
  const body = json(notification("SUBSCRIPTION_RENEW", "evt-diagnostics-1"));

  it("no signature header: reason, notification id and a terse 401 answer", async () => {
    const { response, line } = await post(hmacVerifier(HMAC), { "x-timestamp": String(nowSeconds()) }, body);
    expect(response.status).toBe(401);
    expect(response.answer).toEqual({ processed: false, message: "signature verification failed" });
    expect(line).toMatchObject({
      outcome: "unauthorized",
      reason: "no_signature_header",
      detail: 'no "x-signature" header',
      notification_id: "evt-diagnostics-1",
    });
  });

  it("timestamp outside tolerance: says by how much and which way", async () => {
    const late = await signHmac(body, HMAC, { timestamp: nowSeconds() - 900 });
    const { line } = await post(hmacVerifier(HMAC), late, body);
    expect(line.reason).toBe("timestamp_outside_tolerance");
    expect(line.detail).toMatch(/^"x-timestamp" is 9\d\d s in the past, beyond the tolerance of 300 s/);

    const ahead = await signHmac(body, HMAC, { timestamp: nowSeconds() + 3600 });
    const error = await refusal(body, ahead, hmacVerifier(HMAC));
    expect(error.reason).toBe("timestamp_outside_tolerance");
    expect(error.status).toBe(401);
    expect(error.message).toMatch(/is 3\d{3} s in the future, beyond the tolerance of 300 s/);
    expect(error.answer.message).toBe("signature verification failed");
  });

  it("no signature matched, malformed header, unknown scheme and malformed timestamp each have their code", async () => {
    const signed = await signHmac(body, HMAC);
    const cases: Array<[Record<string, string>, string]> = [
      [{ ...signed, "x-signature": "0".repeat(64) }, "no_signature_matched"],
      [{ ...signed, "x-signature": "not-hex!" }, "malformed_header"],
      [{ ...signed, "x-timestamp": "soon" }, "malformed_timestamp"],
      [{ "x-signature": signed["x-signature"]! }, "no_timestamp"],
    ];
    for (const [headers, reason] of cases)
      expect((await refusal(body, headers, hmacVerifier(HMAC))).reason).toBe(reason);

    const prefixed = hmacVerifier({ ...HMAC, prefix: "sha256=" });
    expect((await refusal(body, signed, prefixed)).reason).toBe("unknown_scheme");
    const millis = await refusal(body, { ...signed, "x-timestamp": String(Date.now()) }, hmacVerifier(HMAC));
    expect(millis.message).toMatch(/looks like milliseconds/);
  });

  it("Standard Webhooks: only other versions is unknown_scheme; a wrong signature is no_signature_matched", async () => {
    const verify = standardWebhooksVerifier(STANDARD_SECRET);
    const signed = await signStandardWebhook(body, STANDARD_SECRET);
    const v1a = { ...signed, "webhook-signature": "v1a,AAAA v2,BBBB" };
    expect((await refusal(body, v1a, verify)).message).toMatch(/has only "v1a", "v2" entries; this verifier checks v1/);
    const wrong = { ...signed, "webhook-signature": `v1,${Buffer.alloc(32).toString("base64")}` };
    expect((await refusal(body, wrong, verify)).reason).toBe("no_signature_matched");
    expect((await refusal(body, { ...signed, "webhook-signature": "garbage" }, verify)).reason).toBe(
      "malformed_header",
    );
  });

  it("a secret function: no secret for the tenant, and a lookup that throws", async () => {
    const signed = await signHmac(body, HMAC);
    const none = hmacVerifier({ ...HMAC, secret: () => [] });
    expect((await refusal(body, signed, none)).reason).toBe("no_secret_for_tenant");
    const throws = hmacVerifier({
      ...HMAC,
      secret: () => {
        throw new Error("tenant table unreachable");
      },
    });
    const { line } = await post(throws, signed, body);
    expect(line).toMatchObject({ reason: "secret_lookup_failed", detail: "the secret function threw (Error)" });
    const short = hmacVerifier({ ...HMAC, secret: () => "short" });
    expect((await refusal(body, signed, short)).message).toMatch(/secret of 5 byte\(s\) is too short/);
  });

  it("a hook of the user's own: verify_rejected and verify_threw", async () => {
    expect((await refusal(body, {}, () => false)).reason).toBe("verify_rejected");
    const threw = await refusal(body, {}, () => {
      throw new TypeError("boom");
    });
    expect(threw.reason).toBe("verify_threw");
  });

  it("names the reason in the answer only when explainSignatureFailures is set", async () => {
    const signed = { ...(await signHmac(body, HMAC)), "x-signature": "0".repeat(64) };
    const terse = await post(hmacVerifier(HMAC), signed, body);
    expect(terse.response.answer.message).toBe("signature verification failed");
    const named = await post(hmacVerifier(HMAC), signed, body, { explainSignatureFailures: true });
    expect(named.response.status).toBe(401);
    expect(named.response.answer.message).toBe("signature verification failed: no_signature_matched");
  });

  it("never writes a secret, the expected signature or a prefix of one, in the log or the error", async () => {
    const signed = await signHmac(body, HMAC);
    const expected = signed["x-signature"]!;
    const forged = { ...signed, "x-signature": `${expected.slice(0, 8)}${"0".repeat(56)}` };
    const { text } = await post(hmacVerifier(HMAC), forged, body, { explainSignatureFailures: true });
    const error = await refusal(body, forged, hmacVerifier(HMAC));
    const everything = `${text}\n${error.message}\n${JSON.stringify(error)}\n${error.detail}`;
    expect(everything).not.toContain(SECRET);
    expect(everything).not.toContain(expected);
    expect(everything).not.toContain(expected.slice(8, 16)); // the part the forger did not send
  });
});

describe("rotation and time limits", () => {
  it("logs at info when a delivery matched an older secret of a rotation", async () => {
    const body = json(notification("SUBSCRIPTION_RENEW", "evt-rotated-1"));
    const rotating = hmacVerifier({ ...HMAC, secret: [SECRET, OLD_SECRET] });
    const signedOld = await signHmac(body, { ...HMAC, secret: OLD_SECRET });
    const { response, lines } = await post(rotating, signedOld, body);
    expect(response.status).toBe(200);
    const rotated = lines().find((line) => /rotated \(older\) secret/.test(line.msg));
    expect(rotated).toMatchObject({ level: 30, notification_id: "evt-rotated-1", secret_index: 1 });

    const current = await post(rotating, await signHmac(body, HMAC), json(notification()));
    expect(current.lines().some((line) => /rotated/.test(line.msg))).toBe(false);
  });

  it("a secret function that never settles is cut off: 503 with Retry-After, reason verify_timed_out", async () => {
    const body = json(notification("SUBSCRIPTION_RENEW", "evt-stalled-1"));
    const stalled = standardWebhooksVerifier(() => new Promise<string>(() => {}));
    const signed = await signStandardWebhook(body, STANDARD_SECRET);
    const { response, line } = await post(stalled, signed, body, { verifyTimeoutMs: 50 });
    expect(response.status).toBe(503);
    expect(response.headers["retry-after"]).toBe("5");
    expect(response.answer.processed).toBe(false);
    expect(line).toMatchObject({ reason: "verify_timed_out", notification_id: "evt-stalled-1" });
    expect(line.detail).toMatch(/did not settle within 50 ms/);

    const error = await parseNotification(
      body,
      { ...JSON_TYPE, ...signed },
      { verify: stalled, verifyTimeoutMs: 50 },
    ).catch((err: NotificationError) => err);
    expect(error).toMatchObject({ status: 503, reason: "verify_timed_out" });
  });

  it("refuses a verifyTimeoutMs of 0 or past the timer maximum at start", () => {
    expect(() => createReceiver({ verify: () => true, verifyTimeoutMs: 0 })).toThrow(/verifyTimeoutMs must be above 0/);
    expect(() => createReceiver({ verify: () => true, verifyTimeoutMs: 3e9 })).toThrow(/at most 2147483647 ms/);
  });
});
