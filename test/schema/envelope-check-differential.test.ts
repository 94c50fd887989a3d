import { subscriptionNotificationSchema } from "merchant-webhooks";
import { EVENT_TYPES } from "merchant-webhooks/schema";
import { buildNotification } from "merchant-webhooks/testing";
import { describe, expect, it } from "vitest";
import { parseJsonObject } from "../../src/receiver/parse-json.js";
import { passesEnvelopeCheck } from "../../src/schema/envelope-check.js";
import { type Random, seededRandom } from "../../src/simulator/random.js";
import { generateBadBodies } from "../bad-input/generate-bad-bodies.js";
import { notification } from "../support/notifications.js";
import { DETAIL, RULES, setAt } from "./rule-cases.js";

// The accept path's compiled check against zod, on every body we can think of: both must accept and
// refuse the same ones. Were the compiled check to accept a body zod refuses, an invalid notification
// would reach a handler; the other way round only costs speed, and is a defect too.

/**
 * A comparison of its own for each test, so each asserts on its own bodies and passes or fails alone.
 * Bodies go through JSON text, as the receiver only checks what `JSON.parse` returned.
 */
function comparison() {
  const disagreements: string[] = [];
  let compared = 0;
  return {
    compare(label: string, value: unknown): void {
      const parsed = parseJsonObject(new TextEncoder().encode(JSON.stringify(value)));
      if (!parsed.ok) return;
      const body = parsed.value;
      compared++;
      const byZod = subscriptionNotificationSchema.safeParse(body);
      const fast = passesEnvelopeCheck(body);
      if (fast !== byZod.success) {
        disagreements.push(`${label}: compiled ${fast}, zod ${byZod.success} — ${JSON.stringify(body).slice(0, 300)}`);
        return;
      }
      // Trust, but verify: what the fast path hands on as the notification is what zod would have.
      if (fast) expect(byZod.data).toEqual(body);
    },
    /** No disagreement, over at least `atLeast` bodies (so a test that compared nothing fails). */
    expectAgreement(atLeast: number): void {
      expect(disagreements).toEqual([]);
      expect(compared).toBeGreaterThanOrEqual(atLeast);
    },
  };
}

const pick = <T>(random: Random, items: readonly T[]): T => items[Math.floor(random() * items.length)]!;

/** Values chosen to sit on the schema's edges: lengths, surrogates, formats, integers, types. */
const EDGE_VALUES: unknown[] = [
  "",
  "x",
  "c".repeat(64),
  "c".repeat(65),
  "i".repeat(256),
  "i".repeat(257),
  "😀".repeat(128),
  "😀".repeat(129),
  "😀".repeat(256),
  "😀".repeat(257),
  `${"c".repeat(63)}😀`,
  `${"c".repeat(64)}😀`,
  "a\ud800",
  "\udc00b",
  "2026-11-23T08:15:30Z",
  "2026-11-23t08:15:30.5+05:30",
  "2026-02-30T00:00:00Z",
  "2026-11-23T24:00:00Z",
  "2026-11-23 08:15:30",
  "19.99",
  "-.5",
  "1.",
  "EUR",
  "eur",
  "EURO",
  "ada@example.com",
  "ada@example",
  "ADA.LOVELACE@EXAMPLE.CO.UK",
  ".ada@example.com",
  "192.168.0.1",
  "256.1.1.1",
  "::1",
  "2001:db8::ff00:42:8329",
  "gggg::1",
  "1732300000000",
  "12345678901234567890",
  "-1",
  "12a",
  0,
  -0,
  1.5,
  -1,
  2 ** 53,
  2 ** 53 - 1,
  1e300,
  true,
  false,
  null,
  [],
  [1, "two", null],
  {},
  { nested: { deep: [1] } },
  "SUBSCRIPTION_RENEW",
  "SOMETHING_NEW",
];

/** Every path in a value, objects and arrays included. */
function paths(value: unknown, path: (string | number)[] = []): (string | number)[][] {
  if (value === null || typeof value !== "object") return [path];
  const entries = Array.isArray(value) ? value.map((v, i) => [i, v] as const) : Object.entries(value);
  return [...(path.length ? [path] : []), ...entries.flatMap(([key, item]) => paths(item, [...path, key]))];
}

function mutated(random: Random, base: Record<string, any>): Record<string, any> {
  const copy = structuredClone(base);
  const count = 1 + Math.floor(random() * 3);
  for (let i = 0; i < count; i++) {
    const all = paths(copy);
    if (all.length === 0) break;
    const path = pick(random, all);
    const action = random();
    if (action < 0.15) setAt(copy, path, undefined);
    else if (action < 0.25)
      setAt(copy, [...path.slice(0, -1), pick(random, ["extra", "id", "email", "ip", "0"])], pick(random, EDGE_VALUES));
    else setAt(copy, path, structuredClone(pick(random, EDGE_VALUES)));
  }
  return copy;
}

describe("the compiled envelope check and zod accept and refuse the same bodies", () => {
  it("on notifications of every event type, with every optional object filled", () => {
    const { compare, expectAgreement } = comparison();
    for (const eventType of EVENT_TYPES) {
      for (let seed = 0; seed < 20; seed++)
        compare(`built ${eventType} ${seed}`, buildNotification(eventType, undefined, { seed }));
      compare(`fixture ${eventType}`, notification(eventType));
    }
    expectAgreement(EVENT_TYPES.length * 21);
  });

  it("on the interface's rule cases, each with its passing and its failing value", () => {
    const { compare, expectAgreement } = comparison();
    for (const [rule, path, passing, failing] of RULES) {
      for (const [which, value] of [
        ["passing", passing],
        ["failing", failing],
      ] as const) {
        const body = notification();
        setAt(body, path, structuredClone(value));
        compare(`${rule} (${which})`, body);
      }
    }
    expectAgreement(RULES.length * 2);
  });

  it("on free maps with any keys, and string maps with values of every kind", () => {
    const { compare, expectAgreement } = comparison();
    const keys = ["", "0", "-1", "é", "😀", "\ud800", "__proto__x", "k".repeat(300), "a b"];
    const values = [null, true, 0, -1.5, "", "x", [], [1, "2"], {}, { nested: { deeper: [null] } }];
    for (const map of ["metadata", "merchant_metadata"]) {
      for (const key of keys)
        for (const value of values) {
          const body = notification("SUBSCRIPTION_RENEW");
          setAt(body, [...DETAIL, map], { [key]: value, other: "kept" });
          compare(`${map} ${JSON.stringify(key)}: ${JSON.stringify(value)}`, body);
        }
      for (const value of [[], "x", 1, null]) {
        const body = notification("SUBSCRIPTION_RENEW");
        setAt(body, [...DETAIL, map], value);
        compare(`${map} as ${JSON.stringify(value)}`, body);
      }
    }
    expectAgreement(2 * (keys.length * values.length + 4));
  });

  it("on the bad-input corpus", () => {
    const { compare, expectAgreement } = comparison();
    let objects = 0;
    for (const { kind, body } of generateBadBodies(256 * 1024)) {
      const parsed = parseJsonObject(body);
      if (!parsed.ok) continue;
      objects++;
      compare(`bad input ${kind}`, parsed.value);
    }
    expectAgreement(Math.max(objects, 1));
  });

  it("on a few thousand mutated notifications (seeded: a disagreement names a reproducible case)", () => {
    const { compare, expectAgreement } = comparison();
    const random = seededRandom(20261125);
    const bases = [
      ...EVENT_TYPES.map((eventType) => buildNotification(eventType, undefined, { seed: 7 })),
      notification(),
    ];
    for (let i = 0; i < 4_000; i++)
      compare(`mutation ${i}`, mutated(random, pick(random, bases) as Record<string, any>));
    expectAgreement(4_000);
  }, 300_000); // a generous bound for a loaded machine: nothing here is timed
});
