import { EVENT_TYPES } from "merchant-webhooks/schema";
import { buildNotification } from "merchant-webhooks/testing";
import { describe, expect, it } from "vitest";
import { parseJsonObject } from "../../src/receiver/parse-json.js";
import { canonicalJson, canonicalJsonByReplacer } from "../../src/shared/canonical-json.js";
import { generateBadBodies } from "../bad-input/generate-bad-bodies.js";

// The fast path (a key-sorted copy, written without a replacer) must write exactly what the replacer
// path writes, for every value: a different text would be a different fingerprint, and a retried
// notification would meet 422.
const same = (value: unknown) => expect(canonicalJson(value)).toBe(canonicalJsonByReplacer(value));

/** The same value with every object's keys in reverse order. */
function reversed(value: unknown): unknown {
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map(reversed);
  return Object.fromEntries(
    Object.entries(value)
      .reverse()
      .map(([key, item]) => [key, reversed(item)]),
  );
}

describe("canonicalJson's fast path against the replacer path", () => {
  it("agrees on every body of the bad-input corpus that the receiver parses (and so fingerprints)", () => {
    let compared = 0;
    for (const { body } of generateBadBodies(256 * 1024)) {
      const parsed = parseJsonObject(body);
      if (!parsed.ok) continue;
      same(parsed.value);
      compared++;
    }
    expect(compared).toBeGreaterThan(1_000);
  });

  it("agrees on generated notifications of every event type, and gives them the same text in any key order", () => {
    for (const eventType of EVENT_TYPES) {
      for (let seed = 0; seed < 25; seed++) {
        const value = JSON.parse(JSON.stringify(buildNotification(eventType, undefined, { seed })));
        same(value);
        same(reversed(value));
        expect(canonicalJson(reversed(value))).toBe(canonicalJson(value));
      }
    }
  });

  it("agrees on keys that sort oddly: array indices, __proto__, unicode and surrogates", () => {
    same(JSON.parse('{"b":1,"10":2,"2":3,"a":{"1":[{"z":0,"y":1}],"0":null}}'));
    same(JSON.parse('{"z":1,"__proto__":{"polluted":true,"a":[]}}'));
    same(JSON.parse('{"é":1,"e":2,"\\ud83d\\ude00":3,"\\ud800":4,"":5,"E":6}'));
    same(Object.assign(Object.create(null), { b: 1, a: Object.assign(Object.create(null), { d: 1, c: 2 }) }));
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("agrees on what only a body parsed by another middleware can hold", () => {
    class Money {
      constructor(
        readonly value: string,
        readonly currency = "JPY",
      ) {}
    }
    same({ b: new Date(0), a: 1 });
    same({ b: undefined, a: [undefined, () => 1, Symbol("s")], c: NaN, d: -Infinity, e: -0 });
    same({ b: new Money("1"), a: { toJSON: () => ({ y: 1, x: 2 }) } });
    same({ a: Object.assign([2, 1], { toJSON: () => ({ q: 1, p: 2 }) }) });
    // biome-ignore lint/suspicious/noSparseArray: a hole must canonicalise as JSON.stringify writes it
    same({ a: [1, , { b: 2, a: 1 }] });
    same({ nested: { deeper: { b: [{ d: 1, c: [] }], a: {} } } });
  });
});
