import { createHmac } from "node:crypto";
import { hmacVerifier, MAX_CACHED_SECRETS, standardWebhooksVerifier } from "merchant-webhooks";
import { signHmac, signStandardWebhook } from "merchant-webhooks/testing";
import { afterEach, describe, expect, it, vi } from "vitest";

const body = new TextEncoder().encode('{"id":"evt-1","event_type":"SUBSCRIPTION_RENEW"}');
const TENANT_SECRETS: Record<string, string> = { acme: "acme-secret-0123456789", globex: "globex-secret-0123456789" };
const sign = (secret: string) => createHmac("sha256", secret).update(body).digest("hex");
const whsec = (text: string) => `whsec_${Buffer.from(text).toString("base64")}`;

afterEach(() => vi.restoreAllMocks());

describe("a secret picked per delivery", () => {
  it("checks each tenant's delivery against that tenant's secret", async () => {
    const verify = hmacVerifier({
      header: "x-signature",
      secret: (headers) => TENANT_SECRETS[headers["x-tenant"] ?? ""] ?? [],
    });
    expect(await verify(body, { "x-tenant": "acme", "x-signature": sign("acme-secret-0123456789") })).toBe(true);
    expect(await verify(body, { "x-tenant": "globex", "x-signature": sign("globex-secret-0123456789") })).toBe(true);
    expect(await verify(body, { "x-tenant": "globex", "x-signature": sign("acme-secret-0123456789") })).toBe(false);
    expect(await verify(body, { "x-tenant": "initech", "x-signature": sign("acme-secret-0123456789") })).toBe(false);
  });

  it("takes a promise and a list (a tenant rotating its secret)", async () => {
    const verify = hmacVerifier({
      header: "x-signature",
      secret: async () => ["new-secret-0123456789", "old-secret-0123456789"],
    });
    expect(await verify(body, { "x-signature": sign("old-secret-0123456789") })).toBe(true);
    expect(await verify(body, { "x-signature": sign("other") })).toBe(false);
  });

  it("fails the check, without throwing, when the lookup throws or yields an unusable secret", async () => {
    const headers = {
      "x-signature": sign("acme-secret-0123456789"),
      "webhook-id": "msg_1",
      "webhook-timestamp": String(Math.floor(Date.now() / 1000)),
      "webhook-signature": "v1,AAAA",
    };
    const failing = [() => Promise.reject(new Error("tenant db down")), () => "", () => []];
    for (const secret of failing)
      expect(await hmacVerifier({ header: "x-signature", secret })(body, headers)).toBe(false);
    expect(await standardWebhooksVerifier(() => "whsec_not base64!")(body, headers)).toBe(false);
  });

  it("verifies Standard Webhooks deliveries with a per-tenant secret", async () => {
    const secrets: Record<string, string> = {
      acme: whsec("acme key bytes, 24 or more"),
      globex: whsec("globex key bytes, 24 or more"),
    };
    const verify = standardWebhooksVerifier((headers) => secrets[headers["x-tenant"] ?? ""] ?? []);
    const signed = await signStandardWebhook(body, secrets.globex!);
    expect(await verify(body, { ...signed, "x-tenant": "globex" })).toBe(true);
    expect(await verify(body, { ...signed, "x-tenant": "acme" })).toBe(false);
  });

  it("imports each distinct secret's key once, however many deliveries use it", async () => {
    const importKey = vi.spyOn(crypto.subtle, "importKey");
    const resolver = vi.fn((headers: Readonly<Record<string, string>>) => TENANT_SECRETS[headers["x-tenant"]!]!);
    const verify = hmacVerifier({ header: "x-signature", secret: resolver });
    for (let i = 0; i < 5; i++) {
      expect(await verify(body, { "x-tenant": "acme", "x-signature": sign("acme-secret-0123456789") })).toBe(true);
      expect(await verify(body, { "x-tenant": "globex", "x-signature": sign("globex-secret-0123456789") })).toBe(true);
    }
    expect(resolver).toHaveBeenCalledTimes(10);
    expect(importKey).toHaveBeenCalledTimes(2);
  });

  it("keeps at most MAX_CACHED_SECRETS keys, dropping the least recently used", async () => {
    const importKey = vi.spyOn(crypto.subtle, "importKey");
    const verify = hmacVerifier({
      header: "x-signature",
      secret: (headers) => `${headers["x-tenant"]!}-secret-0123456789`,
    });
    const deliver = (tenant: string) =>
      verify(body, { "x-tenant": tenant, "x-signature": sign(`${tenant}-secret-0123456789`) });
    for (let i = 0; i <= MAX_CACHED_SECRETS; i++) expect(await deliver(`tenant-${i}`)).toBe(true);
    expect(importKey).toHaveBeenCalledTimes(MAX_CACHED_SECRETS + 1);
    // tenant-1 is still cached; tenant-0 was the least recently used and was dropped.
    await deliver("tenant-1");
    expect(importKey).toHaveBeenCalledTimes(MAX_CACHED_SECRETS + 1);
    await deliver("tenant-0");
    expect(importKey).toHaveBeenCalledTimes(MAX_CACHED_SECRETS + 2);
  });

  it("refuses to sign with a lookup: a sender signs with the secret itself", async () => {
    await expect(signHmac(body, { header: "x-signature", secret: () => "acme-secret-0123456789" })).rejects.toThrow(
      /secret itself/,
    );
  });
});
