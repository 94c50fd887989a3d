import { REDACTED, redactNotification } from "merchant-webhooks";
import { describe, expect, it } from "vitest";
import { maskCardText, redactCardText } from "../../src/logging/card-numbers.js";
import { keptHeaders } from "../../src/logging/kept-headers.js";
import { redactForRecording } from "../../src/logging/replayable-redaction.js";
import {
  type CardForm,
  cardForms,
  cardNumber,
  luhnValid,
  SEPARATORS,
  seeded,
  showsCard,
} from "../support/card-forms.js";

// The one scanner every path uses, over every written form of issue 42: each separator, digit script
// and encoding, 13 to 19 digits, Luhn-valid (found) or not (left as written).

const FORMS = cardForms();
const bySeparator = new Map<string, CardForm[]>();
for (const form of FORMS) {
  const separator = form.name.split(", ")[1]!;
  bySeparator.set(separator, [...(bySeparator.get(separator) ?? []), form]);
}

describe("the card scanner, generated forms", () => {
  it("covers thousands of forms, every separator of the review", () => {
    expect(FORMS.length).toBeGreaterThan(5_000);
    expect(bySeparator.size).toBe(SEPARATORS.length);
  });

  it.each([...bySeparator.keys()])("finds every valid card and leaves every invalid one, separated by %s", (sep) => {
    for (const form of bySeparator.get(sep)!) {
      for (const context of [(t: string) => `card ${t} on file`, (t: string) => t, (t: string) => `ref 55 ${t}.`]) {
        const text = context(form.text);
        const redacted = redactCardText(text);
        const masked = maskCardText(text);
        if (form.valid) {
          expect(showsCard(redacted, form.pan), `${form.name}: ${JSON.stringify(redacted)}`).toBe(false);
          expect(redacted, form.name).toContain(REDACTED);
          expect(showsCard(masked, form.pan), `${form.name}: ${JSON.stringify(masked)}`).toBe(false);
        } else if (!text.startsWith("ref 55")) {
          // Other digits beside an invalid number make other candidates: only the number alone must be left.
          expect(redacted, form.name).toBe(text);
          expect(masked, form.name).toBe(text);
        }
      }
    }
  });

  it("finds them in ids, times, phone numbers, keys and glued to letters or digits, through redactNotification", () => {
    const random = seeded(9);
    for (const form of FORMS.filter((f) => f.valid && random(6) === 0)) {
      const value = {
        reference_id: `ref 55 ${form.text}`,
        order_id: `ORD${form.text}`,
        payer_id: `${form.text}-01`,
        next_execution_time: form.text,
        phone_number: form.text,
        nested: { [`key ${form.text}`]: 1 },
      };
      const out = JSON.stringify(redactNotification(value, { pii: false }));
      expect(showsCard(out, form.pan), `${form.name}: ${out}`).toBe(false);
      const recorded = JSON.stringify(redactForRecording({ address: { [form.text]: "x" }, ...value }, { pii: true }));
      expect(showsCard(recorded, form.pan), `${form.name}: ${recorded}`).toBe(false);
    }
  });

  it("finds JSON numbers by their absolute value: negative, fractional, under any key", () => {
    const out = redactNotification({
      negative: -4111111111111111,
      fractional: 4222222222222.5,
      small_fraction: 0.4111111111111111,
      create_time: 5555555555554444,
      order_id: 4111111111111111,
    });
    expect(out).toEqual({
      negative: REDACTED,
      fractional: REDACTED,
      small_fraction: REDACTED,
      create_time: REDACTED,
      order_id: REDACTED,
    });
  });

  it("keeps a masked key and a real key of the same text apart, whichever comes first", () => {
    const first = redactNotification({ "4111111111111111": "masked", [REDACTED]: "real" }, { pii: false });
    expect(first).toEqual({ [`${REDACTED} (2)`]: "masked", [REDACTED]: "real" });
    const second = redactNotification({ [REDACTED]: "real", "4111 1111 1111 1111": "masked" }, { pii: false });
    expect(second).toEqual({ [REDACTED]: "real", [`${REDACTED} (2)`]: "masked" });
  });

  it("masks kept header values that hold card data", () => {
    const headers = keptHeaders({
      "x-request-id": "req-4111\u20131111\u20131111\u20131111",
      "user-agent": "bot cvv: 123",
      authorization: "4111111111111111",
    });
    expect(headers).toEqual({ "x-request-id": `req-${REDACTED}`, "user-agent": `bot cvv: ${REDACTED}` });
  });
});

describe("verification values under other spellings", () => {
  it("are found anywhere in a folded key", () => {
    const keys = ["card_cvv", "cvc_code", "cvv_number", "cardCvc", "CVV2", "card_pwd", "cardCid", "pin_code", "csc"];
    const out = redactNotification(Object.fromEntries(keys.map((k) => [k, "321"])), { pii: false });
    for (const key of keys) expect(out[key], key).toBe(REDACTED);
  });

  it("leave keys alone that only contain the letters, and the check's outcome", () => {
    const value = { incident_id: "i-1", shipping: "post", cvc_result: "M", decided: "yes", spinner: "on" };
    expect(redactNotification(value, { pii: false })).toEqual(value);
  });

  it("are found in text after the name, linking words and separators", () => {
    const texts = [
      "cvv is 321",
      "cvv:   222",
      "card_cvv=123",
      "cardCvc 4567",
      "CVC2: 999",
      "the cvv was 888",
      "security code: 777",
      'card_pwd "1234"',
      "cid 3333",
      "cvv: ١٢٣",
    ];
    for (const text of texts) {
      const out = redactCardText(text);
      expect(out, text).toContain(REDACTED);
      expect(out.replace(REDACTED, ""), text).not.toMatch(/\p{Nd}{3}/u);
    }
    for (const text of ["incident 1234", "shipping 2024 items", "cvv 12345678", "decided 500"])
      expect(redactCardText(text), text).toBe(text);
  });
});

describe("the false-positive budget", () => {
  /** Real-looking values that hold no card: at most one in a thousand may be changed. */
  function ordinaryValues(count: number): Array<Record<string, unknown>> {
    const random = seeded(77);
    const hex = (n: number) => Array.from({ length: n }, () => "0123456789abcdef"[random(16)]).join("");
    const digits = (n: number) => Array.from({ length: n }, () => String(random(10))).join("");
    const when = () => 1_600_000_000_000 + random(2 ** 30) * 300;
    /** A digit string that is not Luhn-valid as a whole. */
    const notLuhn = (n: number) => {
      let d = digits(n);
      while (luhnValid(d)) d = digits(n);
      return d;
    };
    return Array.from({ length: count }, () => ({
      uuid: `${hex(8)}-${hex(4)}-4${hex(3)}-a${hex(3)}-${hex(12)}`,
      object_id: hex(24),
      platform_id: `WH-${hex(20).toUpperCase()}`,
      iso_time: new Date(when()).toISOString(),
      spaced_time: new Date(when()).toISOString().replace("T", " ").replace("Z", ""),
      epoch_ms: when(),
      epoch_ms_text: `at ${when()}`,
      epoch_us: `${when()}${digits(3)}`,
      epoch_ns: `${when()}${digits(6)}`,
      amount: `${random(1e6)}.${String(random(100)).padStart(2, "0")}`,
      amounts: `${random(1e5)}.${digits(2)} + ${random(1e5)}.${digits(2)} = ${random(1e6)}.${digits(2)} EUR`,
      phone: `+${1 + random(9)}${digits(2)} ${digits(3)} ${digits(4)} ${digits(4)}`,
      phone_e164: `+${1 + random(9)}${digits(13)}`,
      us_phone: `(${digits(3)}) ${digits(3)}-${digits(4)}`,
      order_id: `ORD-${new Date(when()).toISOString().slice(0, 10).replaceAll("-", "")}-${digits(8)}`,
      order_number: notLuhn(16 + random(4)),
      invoice: `INV/${digits(4)}/${digits(6)}`,
      trace: `${hex(32)}-${hex(16)}`,
      list: `ids ${digits(3)}, ${digits(3)}, ${digits(4)}, ${digits(4)}, ${digits(5)}`,
      date_range: `${new Date(when()).toISOString().slice(0, 10)} to ${new Date(when()).toISOString().slice(0, 10)}`,
    }));
  }

  it("changes at most 1 in 1,000 real-looking ids, times, amounts, phone numbers and order ids", () => {
    const values = ordinaryValues(1_000);
    let changed = 0;
    let fields = 0;
    const changes: string[] = [];
    for (const value of values) {
      // Each as a field under its own key, and written into free text, where ids are scanned as text.
      const asText = Object.fromEntries(Object.entries(value).map(([k, v]) => [`${k}_note`, `${k} was ${v}.`]));
      const all = { ...value, ...asText };
      const out = redactNotification(all, { pii: false }) as Record<string, unknown>;
      for (const key of Object.keys(all)) {
        fields++;
        if (out[key] !== all[key]) {
          changed++;
          changes.push(`${key}: ${String(all[key])}`);
        }
      }
    }
    expect(fields).toBe(40_000);
    expect(changed, changes.slice(0, 20).join("\n")).toBeLessThanOrEqual(fields / 1_000);
  });

  it("still finds a card among them", () => {
    const pan = cardNumber("4", 16, seeded(1));
    const out = redactNotification({ note: `order ORD-2026-12-01-0012345 at 2026-12-01 10:00:00 card ${pan}` });
    expect(out.note).toBe(`order ORD-2026-12-01-0012345 at 2026-12-01 10:00:00 card ${REDACTED}`);
  });
});
