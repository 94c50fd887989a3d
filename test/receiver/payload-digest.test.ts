import { EVENT_TYPES } from "merchant-webhooks/schema";
import { buildNotification } from "merchant-webhooks/testing";
import { describe, expect, it, vi } from "vitest";
import { payloadFingerprinter } from "../../src/receiver/fingerprint.js";
import { parseJsonObject } from "../../src/receiver/parse-json.js";
import { canonicalJson } from "../../src/shared/canonical-json.js";
import { seededRandom } from "../../src/simulator/random.js";
import { generateBadBodies } from "../bad-input/generate-bad-bodies.js";

// The fingerprint is a digest taken in one walk of the parsed value. It must call two payloads the
// same exactly when their canonical JSON text is the same: a re-serialised retry must not meet 422,
// and a different payload under a completed id must.
const fingerprint = payloadFingerprinter("a-key-of-sixteen-bytes-or-more") as (value: unknown) => string;

/** Asserts the fingerprint agrees with the canonical text on whether `a` and `b` are the same payload. */
function agree(a: unknown, b: unknown): boolean {
  const same = canonicalJson(a) === canonicalJson(b);
  expect(fingerprint(a) === fingerprint(b), `${canonicalJson(a)} against ${canonicalJson(b)}`).toBe(same);
  return same;
}

/** A JSON text of `value` another serializer could have written: keys shuffled, spaced, escaped, numbers respelled. */
function respelled(value: unknown, rand: () => number): string {
  const pick = <T>(items: T[]) => items[Math.floor(rand() * items.length)]!;
  const gap = () => pick(["", " ", "\n  ", "\t"]);
  const write = (item: unknown): string => {
    if (typeof item === "number") {
      // Every spelling here parses to the same double, so the canonical text is the same.
      if (Number.isInteger(item) && Math.abs(item) < 1e15)
        return pick([String(item), `${item}.0`, `${item}e0`, item === 0 ? "0E5" : `${item}0E-1`, `${item}.000`]);
      return pick([String(item), item.toExponential(), item.toExponential().replace("e", "E")]);
    }
    if (typeof item === "string")
      return rand() < 0.3
        ? `"${Array.from({ length: item.length }, (_, i) => `\\u${item.charCodeAt(i).toString(16).padStart(4, "0")}`).join("")}"`
        : JSON.stringify(item);
    if (item === null || typeof item !== "object") return JSON.stringify(item);
    if (Array.isArray(item)) return `[${gap()}${item.map(write).join(`,${gap()}`)}${gap()}]`;
    const keys = Object.keys(item).sort(() => rand() - 0.5);
    return `{${gap()}${keys.map((key) => `${JSON.stringify(key)}${gap()}:${gap()}${write((item as Record<string, unknown>)[key])}`).join(`,${gap()}`)}${gap()}}`;
  };
  return write(value);
}

/** Random JSON data, small enough to differ in one place from its mutations. */
function randomValue(rand: () => number, depth = 0): unknown {
  const pick = <T>(items: T[]) => items[Math.floor(rand() * items.length)]!;
  const roll = rand();
  if (depth > 3 || roll < 0.55) {
    return pick<() => unknown>([
      () => pick(["", "a", "b", "ab", "1", "é", "\u0000", "a\u0000", "\ud83d\ude00", "\ud800", "x".repeat(17)]),
      () => pick([0, -0, 1, -1, 2 ** 31, -(2 ** 31), 2 ** 31 - 1, 2 ** 53, 0.1, 1e21, 1e-7, 5e-324, 1.5]),
      () => Math.floor(rand() * 1000) - 500,
      () => rand() * 1000,
      () => pick([true, false, null]),
    ])();
  }
  if (roll < 0.75) return Array.from({ length: Math.floor(rand() * 4) }, () => randomValue(rand, depth + 1));
  const object: Record<string, unknown> = {};
  const count = Math.floor(rand() * 5);
  for (let i = 0; i < count; i++)
    object[pick(["a", "b", "ab", "", "0", "1", "é", "__proto__x", "key"])] = randomValue(rand, depth + 1);
  return object;
}

/** `value` with one change somewhere (which may, rarely, leave it the same value). */
function mutated(value: unknown, rand: () => number): unknown {
  const pick = <T>(items: T[]) => items[Math.floor(rand() * items.length)]!;
  if (value === null || typeof value !== "object" || rand() < 0.25) {
    return pick<() => unknown>([
      () => (typeof value === "number" ? String(value) : typeof value === "string" ? Number(value) : [value]),
      () =>
        Array.isArray(value) ? { ...value } : value !== null && typeof value === "object" ? Object.values(value) : null,
      () => (typeof value === "string" ? `${value}\u0000` : typeof value === "number" ? value + 1 : { value }),
      () => randomValue(rand),
    ])();
  }
  if (Array.isArray(value)) {
    if (value.length === 0) return [null];
    const copy = [...value];
    const i = Math.floor(rand() * copy.length);
    if (rand() < 0.3 && copy.length > 1) [copy[0], copy[i]] = [copy[i], copy[0]];
    else if (rand() < 0.2) copy.splice(i, 1);
    else copy[i] = mutated(copy[i], rand);
    return copy;
  }
  const copy: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  const keys = Object.keys(copy);
  if (keys.length === 0) return { a: null };
  const key = pick(keys);
  const change = rand();
  if (change < 0.2) delete copy[key];
  else if (change < 0.35) {
    // The same member under a key one character longer or shorter: the key/value boundary moves.
    const item = copy[key];
    delete copy[key];
    copy[key.length > 0 ? key.slice(1) : "k"] = item;
  } else copy[key] = mutated(copy[key], rand);
  return copy;
}

describe("the payload digest against the canonical JSON text", () => {
  it("agrees on 100,000 generated pairs: a respelled copy is the same payload, a mutated one is not", () => {
    const rand = seededRandom(35);
    let different = 0;
    for (let i = 0; i < 50_000; i++) {
      const value = randomValue(rand);
      expect(agree(value, JSON.parse(respelled(value, rand)))).toBe(true);
      if (!agree(value, mutated(value, rand))) different++;
    }
    // Most mutations change the value; the ones that do not still had to agree.
    expect(different).toBeGreaterThan(40_000);
  });

  it("tells apart what a careless combination would confuse", () => {
    const cases = [
      ["[]", "{}"],
      ['["x"]', '{"0":"x"}'],
      ['{"a":"1"}', '{"a":1}'],
      ['{"ab":"c"}', '{"a":"bc"}'],
      ['{"a":"b","c":"d"}', '{"a":"d","c":"b"}'],
      ['{"a":1,"b":1}', '{"a":2,"b":2}'],
      ['{"a":{"b":1}}', '{"a":{},"b":1}'],
      ["[[1],[2]]", "[[2],[1]]"],
      ['[{"a":1},{"b":2}]', '[{"a":1,"b":2}]'],
      ['{"a":[1,2]}', '{"a":[1],"b":[2]}'],
      ['"a"', '"a\\u0000"'],
      ['"abcdefgh"', '"abcdefgh\\u0000"'],
      ["1", "1.0000000000000002"],
      ["2147483648", "-2147483648"],
      ["0", "false"],
      ["null", '"null"'],
      ["[null]", "[]"],
      ['"\\ud800"', '"\\udbff"'],
      ['{"a":{"a":{}}}', '{"a":{},"b":{}}'],
    ];
    for (const [a, b] of cases) expect(agree(JSON.parse(a!), JSON.parse(b!)), `${a} against ${b}`).toBe(false);
    for (const [a, b] of [
      ["0", "-0"],
      ["1", "1.0"],
      ["100", "1e2"],
      ['{"b":1,"a":[1,{"d":2,"c":3}]}', '{ "a" : [ 1.0, { "c" : 3, "d" : 2 } ], "b" : 1e0 }'],
      ['"é"', '"\\u00e9"'],
    ])
      expect(agree(JSON.parse(a!), JSON.parse(b!)), `${a} against ${b}`).toBe(true);
  });

  it("agrees on every body of the bad-input corpus the receiver parses, and on generated notifications", () => {
    const values: unknown[] = [];
    for (const { body } of generateBadBodies(256 * 1024)) {
      const parsed = parseJsonObject(body);
      if (parsed.ok) values.push(parsed.value);
    }
    for (const eventType of EVENT_TYPES)
      for (let seed = 0; seed < 10; seed++)
        values.push(JSON.parse(JSON.stringify(buildNotification(eventType, undefined, { seed }))));
    expect(values.length).toBeGreaterThan(1_000);
    const rand = seededRandom(3535);
    const seen = new Map<string, string>();
    for (const value of values) {
      expect(agree(value, JSON.parse(respelled(value, rand)))).toBe(true);
      // No two different payloads of the corpus share a fingerprint.
      const text = canonicalJson(value);
      const previous = seen.get(fingerprint(value));
      if (previous !== undefined) expect(previous).toBe(text);
      seen.set(fingerprint(value), text);
    }
  });

  it("digests what only a body parsed by another middleware holds as its canonical text describes it", () => {
    class Money {
      constructor(
        readonly value: string,
        readonly currency = "JPY",
      ) {}
    }
    const pairs: Array<[unknown, string]> = [
      [{ b: new Date(0), a: 1 }, '{"a":1,"b":"1970-01-01T00:00:00.000Z"}'],
      [{ b: undefined, a: [undefined, () => 1], c: Number.NaN, d: -0 }, '{"a":[null,null],"c":null,"d":0}'],
      [
        { b: new Money("1"), a: { toJSON: () => ({ y: 1, x: 2 }) } },
        '{"a":{"x":2,"y":1},"b":{"currency":"JPY","value":"1"}}',
      ],
      // biome-ignore lint/suspicious/noSparseArray: a hole is written as null
      [{ a: [1, , 2] }, '{"a":[1,null,2]}'],
      [Object.assign(Object.create(null), { b: 1, a: 2 }), '{"a":2,"b":1}'],
    ];
    for (const [value, text] of pairs) expect(agree(value, JSON.parse(text))).toBe(true);
  });

  it("does not depend on what was fingerprinted before it, under the same key or another", async () => {
    const rand = seededRandom(36);
    const values = Array.from({ length: 300 }, () => JSON.parse(JSON.stringify({ a: randomValue(rand), b: 1 })));
    const keys = ["a-key-of-sixteen-bytes-or-more", "another-key-of-sixteen-bytes"];
    const fresh = async () => {
      vi.resetModules();
      return (await import("../../src/receiver/fingerprint.js")).payloadFingerprinter;
    };
    try {
      // Each key's fingerprints with nothing fingerprinted before them (a fresh copy of the module).
      const alone: string[][] = [];
      for (const key of keys) {
        const under = (await fresh())(key);
        alone.push(values.map((value) => under(value) as string));
      }
      // Both keys in one copy, in turns, and through the receiver's walk too.
      const shared = await fresh();
      const [ours, other] = keys.map((key) => shared(key));
      values.forEach((value, i) => {
        expect(ours!(value)).toBe(alone[0]![i]);
        expect(other!.within(value, 64)).toBe(alone[1]![i]);
        expect(ours!.within(value, 64)).toBe(alone[0]![i]);
        expect(other!(value)).toBe(alone[1]![i]);
      });
    } finally {
      vi.resetModules();
    }
  });

  it("is not changed by enumerable properties assigned to Object.prototype", () => {
    const renewal = JSON.parse(JSON.stringify(buildNotification("SUBSCRIPTION_RENEW")));
    const clean = fingerprint(renewal);
    const prototype = Object.prototype as Record<string, unknown>;
    prototype.polluted = { by: "a dependency" };
    try {
      expect(fingerprint(renewal)).toBe(clean);
      expect(payloadFingerprinter("a-key-of-sixteen-bytes-or-more").within(renewal, 64)).toBe(clean);
    } finally {
      delete prototype.polluted;
    }
  });

  it("is the same on Web Crypto (runtimes without node:crypto) as on Node's HMAC", async () => {
    const renewal = JSON.parse(JSON.stringify(buildNotification("SUBSCRIPTION_RENEW")));
    const onNode = fingerprint(renewal);
    const getBuiltinModule = process.getBuiltinModule;
    vi.resetModules();
    try {
      (process as { getBuiltinModule?: unknown }).getBuiltinModule = undefined;
      const { payloadFingerprinter: onWebCrypto } = await import("../../src/receiver/fingerprint.js");
      const viaWebCrypto = onWebCrypto("a-key-of-sixteen-bytes-or-more")(renewal);
      expect(viaWebCrypto).toBeInstanceOf(Promise);
      expect(await viaWebCrypto).toBe(onNode);
    } finally {
      process.getBuiltinModule = getBuiltinModule;
      vi.resetModules();
    }
  });
});
