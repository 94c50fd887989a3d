import {
  currencyCodeSchema,
  emailSchema,
  freeMapSchema,
  int64Schema,
  ipSchema,
  moneyValueSchema,
  nonEmptyString,
  openEnum,
  stringMapSchema,
  timestampSchema,
  uriSchema,
} from "merchant-webhooks/schema";
import { describe, expect, expectTypeOf, it } from "vitest";
import { expectInvalidAt, expectValid } from "./support.js";

/** The issue codes a value produces at the top level; [] when it passes. */
function codes(schema: { safeParse(value: unknown): { error?: { issues: { code: string }[] } } }, value: unknown) {
  return (schema.safeParse(value).error?.issues ?? []).map((issue) => issue.code);
}

describe("timestampSchema", () => {
  it.each([
    "2026-11-23T08:15:30Z",
    "2026-11-23t08:15:30z",
    "2026-11-23T08:15:30.1Z",
    "2026-11-23T08:15:30.123456789+05:30",
    "2026-11-23T08:15:30-07:00",
    "2026-01-31T00:00:00Z",
    "2026-04-30T23:59:59Z",
    "2024-02-29T12:00:00Z",
    "2016-12-31T23:59:60Z", // leap second
    "2026-11-23T08:15:30+23:59",
  ])("accepts %s", (value) => {
    expectValid(timestampSchema, value);
  });

  it.each([
    ["space separator", "2026-11-23 08:15:30Z"],
    ["no zone", "2026-11-23T08:15:30"],
    ["date only", "2026-11-23"],
    ["month 13", "2026-13-01T00:00:00Z"],
    ["month 00", "2026-00-10T00:00:00Z"],
    ["day 00", "2026-11-00T00:00:00Z"],
    ["April 31", "2026-04-31T00:00:00Z"],
    ["February 30", "2026-02-30T00:00:00Z"],
    ["hour 24", "2026-11-23T24:00:00Z"],
    ["minute 60", "2026-11-23T23:60:00Z"],
    ["second 61", "2026-11-23T23:59:61Z"],
    ["offset without colon", "2026-11-23T08:15:30+0530"],
    ["offset hour 24", "2026-11-23T08:15:30+24:00"],
    ["empty fraction", "2026-11-23T08:15:30.Z"],
    ["two-digit year", "26-11-23T08:15:30Z"],
    ["trailing text", "2026-11-23T08:15:30Z "],
  ])("rejects %s", (_case, value) => {
    expect(codes(timestampSchema, value)).toEqual(["invalid_format"]);
  });

  it("rejects a number (epoch milliseconds)", () => {
    expectInvalidAt(timestampSchema, 1732300000000, []);
  });
});

describe("moneyValueSchema", () => {
  it.each(["0", "19.99", "100", "-5", "-0.01", ".5", "-.5", "0012.3400"])("accepts %s", (value) => {
    expectValid(moneyValueSchema, value);
  });

  it.each(["", "1,00", "1e3", "19.", "+1", " 1", "1.2.3", "19.99 EUR", "-", "."])("rejects %j", (value) => {
    expect(codes(moneyValueSchema, value)).toEqual(["invalid_format"]);
  });

  it("rejects a JSON number: amounts are strings", () => {
    expect(codes(moneyValueSchema, 19.99)).toEqual(["invalid_type"]);
  });
});

describe("currencyCodeSchema", () => {
  it.each(["EUR", "JPY", "USD"])("accepts %s", (value) => {
    expectValid(currencyCodeSchema, value);
  });

  it.each(["eur", "Eur", "EU", "EURO", "E1R", "", " EUR"])("rejects %j", (value) => {
    expect(codes(currencyCodeSchema, value)).toEqual(["invalid_format"]);
  });
});

describe("emailSchema", () => {
  it.each(["ada@example.com", "a.b+tag@mail.example.co"])("accepts %s", (value) => {
    expectValid(emailSchema, value);
  });

  it.each(["", "ada", "ada@", "@example.com", "ada@example", "ada example@example.com"])("rejects %j", (value) => {
    expect(codes(emailSchema, value)).toEqual(["invalid_format"]);
  });
});

describe("ipSchema", () => {
  it.each(["203.0.113.7", "0.0.0.0", "2001:db8::1", "::1", "fe80::1ff:fe23:4567:890a"])("accepts %s", (value) => {
    expectValid(ipSchema, value);
  });

  it.each(["", "300.1.1.1", "1.2.3", "2001:db8::zz", "example.com", "203.0.113.7:8080"])("rejects %j", (value) => {
    expectInvalidAt(ipSchema, value, []);
  });
});

describe("uriSchema", () => {
  it.each(["https://pay.example/return?x=1", "http://localhost:3000/hook"])("accepts %s", (value) => {
    expectValid(uriSchema, value);
  });

  it.each(["", "not a url", "/relative/path"])("rejects %j", (value) => {
    expectInvalidAt(uriSchema, value, []);
  });
});

describe("nonEmptyString", () => {
  it("accepts one character and rejects the empty string", () => {
    expectValid(nonEmptyString, "a");
    expect(codes(nonEmptyString, "")).toEqual(["too_small"]);
  });
});

describe("int64Schema", () => {
  it.each([1732300000000, 0, -5, Number.MAX_SAFE_INTEGER, "1732300000000", "-5", "0", "9223372036854775807"])(
    "accepts %j and keeps it as received",
    (value) => {
      expect(expectValid(int64Schema, value)).toBe(value);
    },
  );

  it.each([
    ["a fraction", 1.5],
    ["a number beyond 2^53 (already rounded by JSON.parse)", 2 ** 53],
    ["letters", "12a"],
    ["a decimal string", "1.5"],
    ["an empty string", ""],
    ["a plus sign", "+5"],
    ["whitespace", " 5"],
    ["more than 19 digits", "12345678901234567890"],
    ["a boolean", true],
    ["null", null],
  ])("rejects %s", (_case, value) => {
    expectInvalidAt(int64Schema, value, []);
  });
});

describe("openEnum", () => {
  const colour = openEnum(["RED", "GREEN"]);

  it("accepts the listed values and values added later", () => {
    expectValid(colour, "RED");
    expectValid(colour, "ULTRAVIOLET");
  });

  it("still requires a string", () => {
    expect(codes(colour, 1)).toEqual(["invalid_type"]);
  });

  it("types the output as the known union plus any string", () => {
    expectTypeOf(colour.parse("RED")).toEqualTypeOf<"RED" | "GREEN" | (string & {})>();
  });
});

describe("maps", () => {
  it("stringMapSchema keeps string values and rejects others at their key", () => {
    expect(expectValid(stringMapSchema, { plan: "pro" })).toEqual({ plan: "pro" });
    expectInvalidAt(stringMapSchema, { plan: "pro", seats: 3 }, ["seats"]);
  });

  it("freeMapSchema keeps values of any JSON type, but must be an object", () => {
    const value = { seats: 3, tags: ["a"], nested: { on: true } };
    expect(expectValid(freeMapSchema, value)).toEqual(value);
    expectInvalidAt(freeMapSchema, ["a"], []);
  });
});
