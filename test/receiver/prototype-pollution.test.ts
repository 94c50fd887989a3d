import { createReceiver } from "merchant-webhooks";
import { afterEach, describe, expect, it } from "vitest";
import { parseJsonObject } from "../../src/receiver/parse-json.js";
import { silentLogger } from "../support/capture-logger.js";
import { notification } from "../support/notifications.js";

const bytes = (text: string) => new TextEncoder().encode(text);

describe("payload keys cannot pollute prototypes", () => {
  afterEach(() => {
    delete (Object.prototype as any).polluted;
  });

  it.each([
    ['{"__proto__": {"polluted": true}}'],
    ['{"a": {"__proto__": {"polluted": true}}}'],
    ['{"\\u005f_proto__": {"polluted": true}}'],
    ['{"constructor": {"prototype": {"polluted": true}}}'],
  ])("drops the dangerous keys of %s", (text) => {
    const parsed = parseJsonObject(bytes(text));
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    const copy = Object.assign({}, parsed.value, (parsed.value as any).a);
    expect((copy as any).polluted).toBeUndefined();
    expect(({} as any).polluted).toBeUndefined();
    expect(Object.keys(parsed.value)).not.toContain("__proto__");
  });

  it("keeps a harmless key named constructor", () => {
    const parsed = parseJsonObject(bytes('{"constructor": "a string"}'));
    expect(parsed).toEqual({ ok: true, value: { constructor: "a string" } });
  });

  it("handles a notification carrying __proto__ keys everywhere without pollution, and processes it", async () => {
    const body = notification();
    const text = JSON.stringify(body)
      .replace('"resource":{', '"resource":{"__proto__":{"polluted":true},')
      .replace("{", '{"__proto__":{"isAdmin":true},');
    let received: any;
    const receiver = createReceiver({ logger: silentLogger(), onRenew: (n) => void (received = n) });
    const response = await receiver.handle({ method: "POST", headers: {}, rawBody: bytes(text) });
    expect(response.status).toBe(200);
    expect(received.isAdmin).toBeUndefined();
    expect(received.resource.polluted).toBeUndefined();
    expect(({} as any).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(received)).toBe(Object.prototype);
  });

  it("fingerprints a body the same whether it came with dropped keys or without", async () => {
    const body = notification();
    const clean = JSON.stringify(body);
    const withKeys = clean.replace("{", '{"__proto__":{"isAdmin":true},');
    const withConstructor = clean.replace("{", '{"constructor":"Acme builders",');
    const receiver = createReceiver({ logger: silentLogger(), onRenew: () => {} });
    const post = (text: string) => receiver.handle({ method: "POST", headers: {}, rawBody: bytes(text) });
    expect((await post(clean)).answer.message).toBe("processed");
    // The retry's dropped key leaves the same payload: a duplicate, not another payload under the id.
    expect((await post(withKeys)).answer.message).toBe("already processed");
    // A harmless key named constructor stays: another payload.
    expect((await post(withConstructor)).status).toBe(422);
  });
});
