import { describe, expect, it } from "vitest";
import { fingerprintOf } from "../../src/receiver/fingerprint.js";
import { canonicalJson } from "../../src/shared/canonical-json.js";

describe("canonicalJson", () => {
  it("writes the same text for the same JSON value whatever the key order, spacing or escapes", () => {
    const a = JSON.parse('{"b":1,"a":{"d":[1,{"z":true,"y":null}],"c":"x"},"é":"\\u00e9"}');
    const b = JSON.parse(
      '{ "\\u00e9" : "é", "a" : { "c" : "\\u0078", "d" : [ 1.0, { "y" : null, "z" : true } ] }, "b" : 1 }',
    );
    expect(canonicalJson(a)).toBe(canonicalJson(b));
    expect(canonicalJson(a)).toBe('{"a":{"c":"x","d":[1,{"y":null,"z":true}]},"b":1,"é":"é"}');
  });

  it("tells different values apart: array order, types and lone surrogates count", () => {
    const texts = [
      '{"a":[1,2]}',
      '{"a":[2,1]}',
      '{"a":"1"}',
      '{"a":1}',
      '{"a":"x\\ud800"}',
      '{"a":"x\\udbff"}',
      '{"a":"x\\ufffd"}',
    ];
    const canon = texts.map((text) => canonicalJson(JSON.parse(text)));
    expect(new Set(canon).size).toBe(texts.length);
  });

  it("keeps a __proto__ key from the payload as data, without touching prototypes", () => {
    const value = JSON.parse('{"z":1,"__proto__":{"polluted":true}}');
    expect(canonicalJson(value)).toBe('{"__proto__":{"polluted":true},"z":1}');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("gives the same fingerprint to both serialisations, and another to another value", async () => {
    const first = await fingerprintOf(JSON.parse('{"id":"n-1","b":[1,2]}'));
    expect(await fingerprintOf(JSON.parse('{\n  "b": [1, 2],\n  "id": "n-\\u0031"\n}'))).toBe(first);
    expect(await fingerprintOf(JSON.parse('{"id":"n-1","b":[2,1]}'))).not.toBe(first);
    expect(first).toMatch(/^[0-9a-f]{64}$/);
  });
});
