import { createHmac } from "node:crypto";
import { type HmacVerifierOptions, hmacVerifier } from "merchant-webhooks";
import { signHmac } from "merchant-webhooks/testing";
import { afterEach, describe, expect, it, vi } from "vitest";

const body = new TextEncoder().encode('{"id":"evt-1","event_type":"SUBSCRIPTION_RENEW"}');
const SECRET = "shh-its-a-secret";
const NOW = Date.UTC(2026, 10, 23, 8, 0, 0);
const nowSeconds = NOW / 1000;

/** An independent signer (Node's crypto), so the verifier is not only checked against its own signer. */
const nodeHmac = (algorithm: string, secret: string, content: string | Uint8Array, encoding: "hex" | "base64") =>
  createHmac(algorithm, secret).update(content).digest(encoding);

afterEach(() => vi.useRealTimers());

describe("hmacVerifier", () => {
  it.each([
    ["sha256", "hex"],
    ["sha256", "base64"],
    ["sha512", "hex"],
    ["sha512", "base64"],
  ] as const)("accepts an HMAC-%s signature written in %s, from any signer", async (algorithm, encoding) => {
    const verify = hmacVerifier({ secret: SECRET, header: "X-Signature", algorithm, encoding });
    const signature = nodeHmac(algorithm, SECRET, body, encoding);
    expect(await verify(body, { "x-signature": signature })).toBe(true);
    expect(await verify(body, { "x-signature": nodeHmac(algorithm, "other", body, encoding) })).toBe(false);
  });

  it("accepts upper-case hex", async () => {
    const verify = hmacVerifier({ secret: SECRET, header: "x-signature" });
    expect(await verify(body, { "x-signature": nodeHmac("sha256", SECRET, body, "hex").toUpperCase() })).toBe(true);
  });

  it("reads the configured header only", async () => {
    const verify = hmacVerifier({ secret: SECRET, header: "x-platform-signature" });
    const signature = nodeHmac("sha256", SECRET, body, "hex");
    expect(await verify(body, { "x-signature": signature })).toBe(false);
    expect(await verify(body, { "x-platform-signature": signature })).toBe(true);
  });

  it("requires the prefix and strips it before comparing", async () => {
    const verify = hmacVerifier({ secret: SECRET, header: "x-signature", prefix: "sha256=" });
    const signature = nodeHmac("sha256", SECRET, body, "hex");
    expect(await verify(body, { "x-signature": `sha256=${signature}` })).toBe(true);
    expect(await verify(body, { "x-signature": signature })).toBe(false);
    expect(await verify(body, { "x-signature": `sha1=${signature}` })).toBe(false);
  });

  it("fails when one byte of the body differs", async () => {
    const verify = hmacVerifier({ secret: SECRET, header: "x-signature" });
    const tampered = body.slice();
    tampered[tampered.length - 2]! ^= 1;
    expect(await verify(tampered, { "x-signature": nodeHmac("sha256", SECRET, body, "hex") })).toBe(false);
  });

  it.each([
    ["missing", {}],
    ["empty", { "x-signature": "" }],
    ["not hex", { "x-signature": "zz".repeat(32) }],
    ["odd-length hex", { "x-signature": "abc" }],
    ["truncated", { "x-signature": "ab".repeat(16) }],
    ["only separators", { "x-signature": " , ," }],
  ])("fails when the signature header is %s", async (_case, headers) => {
    const verify = hmacVerifier({ secret: SECRET, header: "x-signature" });
    expect(await verify(body, headers)).toBe(false);
  });

  it("passes with any of several secrets while one is rotated, and signs with the first", async () => {
    const options: HmacVerifierOptions = {
      secret: ["new-secret-0123456789", "old-secret-0123456789"],
      header: "x-signature",
    };
    const verify = hmacVerifier(options);
    expect(await verify(body, { "x-signature": nodeHmac("sha256", "old-secret-0123456789", body, "hex") })).toBe(true);
    expect(await verify(body, { "x-signature": nodeHmac("sha256", "new-secret-0123456789", body, "hex") })).toBe(true);
    expect(await verify(body, { "x-signature": nodeHmac("sha256", "retired-secret", body, "hex") })).toBe(false);
    expect(await signHmac(body, options)).toEqual({
      "x-signature": nodeHmac("sha256", "new-secret-0123456789", body, "hex"),
    });
  });

  it("accepts a header listing several signatures when one of them matches", async () => {
    const verify = hmacVerifier({ secret: SECRET, header: "x-signature", prefix: "v1=" });
    const good = nodeHmac("sha256", SECRET, body, "hex");
    const bad = nodeHmac("sha256", "other", body, "hex");
    expect(await verify(body, { "x-signature": `v1=${bad}, v1=${good}` })).toBe(true);
    expect(await verify(body, { "x-signature": `v1=${bad} v1=${bad}` })).toBe(false);
  });

  it("accepts a raw byte secret", async () => {
    const secret = new Uint8Array([0, 1, 2, 250, 251]);
    const verify = hmacVerifier({ secret, header: "x-signature" });
    const signature = createHmac("sha256", secret).update(body).digest("hex");
    expect(await verify(body, { "x-signature": signature })).toBe(true);
  });

  describe("with a timestamp header", () => {
    const options: HmacVerifierOptions = {
      secret: SECRET,
      header: "x-signature",
      timestamp: { header: "X-Timestamp", toleranceSeconds: 300 },
    };
    const signedAt = (seconds: number) => ({
      "x-timestamp": String(seconds),
      "x-signature": nodeHmac("sha256", SECRET, Buffer.concat([Buffer.from(`${seconds}.`), body]), "hex"),
    });

    // biome-ignore lint/suspicious/noTemplateCurlyInString: the title names the signed text's shape, literally
    it("signs `${timestamp}.${body}` and accepts a fresh delivery", async () => {
      vi.useFakeTimers({ now: NOW });
      expect(await hmacVerifier(options)(body, signedAt(nowSeconds))).toBe(true);
      expect(await signHmac(body, options, { timestamp: nowSeconds })).toEqual(signedAt(nowSeconds));
    });

    it.each([
      ["at the edge in the past", -300, true],
      ["at the edge in the future", 300, true],
      ["too old", -301, false],
      ["too far in the future", 301, false],
    ])("a timestamp %s: %s", async (_case, offset, accepted) => {
      vi.useFakeTimers({ now: NOW });
      expect(await hmacVerifier(options)(body, signedAt(nowSeconds + offset))).toBe(accepted);
    });

    it("fails when the timestamp is missing, malformed, or not the one signed", async () => {
      vi.useFakeTimers({ now: NOW });
      const verify = hmacVerifier(options);
      const { "x-signature": signature } = signedAt(nowSeconds);
      expect(await verify(body, { "x-signature": signature })).toBe(false);
      expect(await verify(body, { "x-signature": signature, "x-timestamp": "soon" })).toBe(false);
      expect(await verify(body, { "x-signature": signature, "x-timestamp": `${nowSeconds}.5` })).toBe(false);
      expect(await verify(body, { "x-signature": signature, "x-timestamp": String(nowSeconds - 1) })).toBe(false);
    });

    it("uses the configured separator", async () => {
      vi.useFakeTimers({ now: NOW });
      const verify = hmacVerifier({ ...options, timestamp: { header: "x-timestamp", separator: ":" } });
      const signature = nodeHmac("sha256", SECRET, Buffer.concat([Buffer.from(`${nowSeconds}:`), body]), "hex");
      expect(await verify(body, { "x-timestamp": String(nowSeconds), "x-signature": signature })).toBe(true);
    });
  });

  it("round-trips with signHmac for every option combination", async () => {
    const options: HmacVerifierOptions = {
      secret: SECRET,
      header: "x-sig",
      algorithm: "sha512",
      encoding: "base64",
      prefix: "sha512=",
      timestamp: { header: "x-ts" },
    };
    expect(await hmacVerifier(options)(body, await signHmac(body, options))).toBe(true);
  });

  it("refuses a configuration it cannot check with, at start-up", () => {
    expect(() => hmacVerifier({ secret: "", header: "x-signature" })).toThrow(/secret/);
    expect(() => hmacVerifier({ secret: [], header: "x-signature" })).toThrow(/secret/);
    expect(() => hmacVerifier({ secret: SECRET, header: "" })).toThrow(/header/);
    expect(() => hmacVerifier({ secret: SECRET, header: "x", algorithm: "md5" as "sha256" })).toThrow(/algorithm/);
    expect(() => hmacVerifier({ secret: SECRET, header: "x", encoding: "base32" as "hex" })).toThrow(/encoding/);
    expect(() =>
      hmacVerifier({ secret: SECRET, header: "x", timestamp: { header: "t", toleranceSeconds: -1 } }),
    ).toThrow(/tolerance/);
  });
});
