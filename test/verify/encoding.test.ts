import { describe, expect, it } from "vitest";
import { constantTimeEqual } from "../../src/verify/constant-time.js";
import { base64ToBytes, bytesToBase64, bytesToHex, hexToBytes } from "../../src/verify/encoding.js";

const all = Uint8Array.from({ length: 256 }, (_, i) => i);

describe("signature encodings", () => {
  it("round-trips every byte value through hex and base64, matching Node's Buffer", () => {
    expect(bytesToHex(all)).toBe(Buffer.from(all).toString("hex"));
    expect(bytesToBase64(all)).toBe(Buffer.from(all).toString("base64"));
    expect(hexToBytes(bytesToHex(all))).toEqual(all);
    expect(base64ToBytes(bytesToBase64(all))).toEqual(all);
  });

  it("reads URL-safe and unpadded base64", () => {
    const bytes = Uint8Array.from([251, 255, 191]);
    expect(base64ToBytes(Buffer.from(bytes).toString("base64url"))).toEqual(bytes);
    expect(base64ToBytes("AQI")).toEqual(Uint8Array.from([1, 2]));
  });

  it.each(["zz", "abc", "0x12"])("returns undefined for malformed hex %j", (text) => {
    expect(hexToBytes(text)).toBeUndefined();
  });

  it.each(["a", "ab$c", "a=bc", "abc==="])("returns undefined for malformed base64 %j", (text) => {
    expect(base64ToBytes(text)).toBeUndefined();
  });

  it("compares equal-length arrays by content and unequal lengths as different", () => {
    expect(constantTimeEqual(Uint8Array.of(1, 2, 3), Uint8Array.of(1, 2, 3))).toBe(true);
    expect(constantTimeEqual(Uint8Array.of(1, 2, 3), Uint8Array.of(1, 2, 4))).toBe(false);
    expect(constantTimeEqual(Uint8Array.of(1, 2), Uint8Array.of(1, 2, 3))).toBe(false);
  });
});
