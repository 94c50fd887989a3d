/**
 * When the header a verifier reads is absent, the delivery may have been signed under the other
 * scheme (a Standard Webhooks sender pointed at an HMAC receiver, or the reverse). Name the signature
 * headers it does carry, names only, so the log says which verifier the sender needs.
 */
export function otherSignatureHeaders(headers: Readonly<Record<string, string>>, expected: string): string {
  const present = Object.keys(headers).filter((name) => name !== expected && /signature/.test(name));
  if (present.length === 0) return "";
  const standard = present.some((name) => name === "webhook-signature" || name === "svix-signature");
  const advice = standard
    ? "a Standard Webhooks sender: use standardWebhooksVerifier"
    : "an HMAC sender: use hmacVerifier with that header";
  return `; the delivery carries ${present.map((name) => `"${name}"`).join(", ")} (${advice})`;
}
