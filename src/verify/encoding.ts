/**
 * Hex and base64 without `Buffer`, so the verifiers run unchanged on Workers, Deno and Bun. Decoders
 * return `undefined` for malformed input: a malformed signature is a failed check, never an exception.
 */

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));
const HEX_PATTERN = /^(?:[0-9a-fA-F]{2})*$/;
// Standard and URL-safe alphabets, padding optional: senders differ, the bytes do not.
const BASE64_PATTERN = /^[A-Za-z0-9+/\-_]*={0,2}$/;

export const utf8 = new TextEncoder();

export function bytesToHex(bytes: Uint8Array): string {
  let out = "";
  for (let i = 0; i < bytes.length; i++) out += HEX[bytes[i]!];
  return out;
}

export function hexToBytes(text: string): Uint8Array | undefined {
  if (!HEX_PATTERN.test(text)) return undefined;
  const out = new Uint8Array(text.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = Number.parseInt(text.slice(i * 2, i * 2 + 2), 16);
  return out;
}

export function bytesToBase64(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i++) binary += String.fromCharCode(bytes[i]!);
  return btoa(binary);
}

export function base64ToBytes(text: string): Uint8Array | undefined {
  if (!BASE64_PATTERN.test(text)) return undefined;
  const standard = text.replace(/-/g, "+").replace(/_/g, "/").replace(/=+$/, "");
  if (standard.length % 4 === 1) return undefined;
  let binary: string;
  try {
    binary = atob(standard.padEnd(Math.ceil(standard.length / 4) * 4, "="));
  } catch {
    return undefined;
  }
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}
