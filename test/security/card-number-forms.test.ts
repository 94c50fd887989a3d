import { createReceiver, REDACTED, type RecordedNotification, redactNotification } from "merchant-webhooks";
import { describe, expect, it } from "vitest";
import { captureLogger } from "../support/capture-logger.js";
import { json, notification } from "../support/notifications.js";

// Card numbers in the forms a review found leaking to ctx.log and recordings: inside the text of an
// `*_id` field, split by a no-break space, a tab, a newline, `%20`, `/` or `,`, and in full-width
// digits. Cases are generated from a seed, so a failure names a case that can be run again.

const PANS = [
  "4111111111111111",
  "5555555555554444",
  "2223003122003222",
  "378282246310005",
  "36227206271667",
  "4222222222222",
  "6011000990139424",
  "3530111333300000",
  "6200000000000005",
];
const SEPARATORS = ["\u00a0", "\t", "\n", "%20", "/", ",", " ", "\u00a0\u00a0", ", "];

function seeded(seed: number) {
  return (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
}

const fullWidth = (text: string) => text.replace(/[0-9]/g, (d) => String.fromCharCode(0xff10 + Number(d)));

/** Cards are written in fours, or four-six-five (American Express, Diners). */
function cardGroups(pan: string): string[] {
  if (pan.length === 15 || pan.length === 14) return [pan.slice(0, 4), pan.slice(4, 10), pan.slice(10)];
  return pan.match(/.{1,4}/g)!;
}

interface Case {
  name: string;
  pan: string;
  form: string;
}

/** `count` cases: each a card number grouped as cards are, or whole, with one separator, maybe full-width. */
function cases(count: number, seed: number): Case[] {
  const random = seeded(seed);
  return Array.from({ length: count }, (_, i) => {
    const pan = PANS[i % PANS.length]!;
    const separator = SEPARATORS[random(SEPARATORS.length)]!;
    // Full-width digits, never full-width percent escapes: the digits change, the separators do not.
    const digits = random(3) === 0 ? fullWidth : (text: string) => text;
    const form = random(5) === 0 ? digits(pan) : cardGroups(pan).map(digits).join(separator);
    return { name: `${i}: ${JSON.stringify(form)}`, pan, form };
  });
}

/**
 * Whether `text` (a log line or a recording, as JSON) still shows `pan` in any form: full-width digits
 * made ASCII, and every separator, escape and percent escape between digits taken out. Taking them
 * out everywhere can only join digits that were apart, never hide a card that is there.
 */
function shows(text: string, pan: string): boolean {
  const plain = text
    .replace(/[\uFF10-\uFF19]/g, (d) => String(d.charCodeAt(0) - 0xff10))
    .replace(/\\[tnr]|\\u00a0|%20|%09|%0[AaDd]|%2[CcFf]|%C2%A0|[\s,/._-]/g, "");
  return plain.includes(pan);
}

/** A notification carrying `form` in free text, as an `*_id` value, and inside the text of another. */
function carrying(form: string) {
  const body = notification();
  body.resource.renewal_event.payment_detail.metadata = {
    memo: `customer wrote ${form} on the form`,
    payer_id: form,
    external_id: `ref-${form}`,
    order_id: `order for ${form} on file`,
  };
  return body;
}

describe("card numbers in disguise, through ctx.log and recordings", () => {
  it.each(cases(120, 11).map((c) => [c.name, c] as const))("never shows case %s", async (_, { pan, form }) => {
    const { logger, text } = captureLogger();
    const entries: RecordedNotification[] = [];
    const receiver = createReceiver({
      logger,
      record: { write: (entry) => void entries.push(entry) },
      onRenew: (n, ctx) => {
        ctx.log.info({ notification: n }, "received");
        const metadata = n.resource.renewal_event?.payment_detail?.metadata as Record<string, string>;
        ctx.log.info(`memo was ${metadata.memo}; payer ${metadata.payer_id}`);
      },
    });
    const response = await receiver.handle({ method: "POST", headers: {}, rawBody: json(carrying(form)) });
    expect(response.status).toBe(200);
    await receiver.close();
    expect(text()).toContain('"msg":"received"');
    expect(entries).toHaveLength(1);
    expect(shows(text(), pan), text()).toBe(false);
    expect(shows(JSON.stringify(entries[0]), pan), JSON.stringify(entries[0])).toBe(false);
  });

  it("finds them split anywhere in free text by the new separators too", () => {
    const random = seeded(5);
    for (let round = 0; round < 300; round++) {
      const pan = PANS[round % PANS.length]!;
      const separator = [" ", "\u00a0", "\t", "\n", "%20"][random(5)]!;
      const digits = random(2) === 0 ? fullWidth : (text: string) => text;
      let form = "";
      for (let i = 0; i < pan.length; i++) form += (i > 0 && random(4) === 0 ? separator : "") + digits(pan[i]!);
      const out = redactNotification({ note: `ref ${form} end` }).note;
      expect(shows(out, pan), JSON.stringify(form)).toBe(false);
    }
  });

  it("leaves ordinary ids, amounts, times and lists as they are", () => {
    const random = seeded(3);
    const hex = (n: number) => Array.from({ length: n }, () => "0123456789abcdef"[random(16)]).join("");
    const values = Array.from({ length: 400 }, (_, i) => ({
      subscription_id: `${hex(8)}-${hex(4)}-4${hex(3)}-a${hex(3)}-${hex(12)}`,
      notification_id: `evt-${1_700_000_000_000 + random(1e9)}`,
      trace_id: `${1_700_000_000_000_000 + i * 7919}`,
      order_id: `ORD-2026${String(random(1e4)).padStart(4, "0")}-${String(random(1e8)).padStart(8, "0")}`,
      create_time: new Date(1_700_000_000_000 + random(1e9)).toISOString(),
      amount: `${random(1e6)},${String(random(1e3)).padStart(3, "0")}.${String(random(100)).padStart(2, "0")}`,
      note: `sizes ${random(40)}/${random(40)}/${random(40)}/${random(40)}/${random(40)}/${random(40)}, ids ${random(1e3)}, ${random(1e3)}, ${random(1e3)}, ${random(1e4)}, ${random(1e4)} on ${new Date(1_700_000_000_000 + random(1e9)).toISOString().slice(0, 10).replaceAll("-", "/")}`,
    }));
    for (const value of values) expect(redactNotification(value, { pii: false })).toEqual(value);
  });

  it("finds a card number glued to letters in an id (`P<card>X`), as in any text", () => {
    const random = seeded(5);
    const HEX = "0123456789ABCDEF";
    const hex = (n: number) => Array.from({ length: n }, () => HEX[random(16)]).join("");
    /** `length` digits from `first`, the last one making the Luhn check pass. */
    const luhnValid = (first: string, length: number) => {
      let digits = first + Array.from({ length: length - first.length - 1 }, () => String(random(10))).join("");
      let sum = 0;
      for (let i = 0; i < digits.length; i++) {
        let d = Number(digits[digits.length - 1 - i]);
        if (i % 2 === 0) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
        sum += d;
      }
      digits += String((10 - (sum % 10)) % 10);
      return digits;
    };
    // A card number is one whatever letters it is glued to: `ORD<card>` (a random hex id's digits are checked in the budget test).
    const values = Array.from({ length: 200 }, (_, i) => ({
      id: `WH-${hex(4)}EA${luhnValid(["4", "5", "81"][i % 3]!, 13 + (i % 4))}D`,
      payer_id: `P${luhnValid("4", 16)}X`,
    }));
    for (const value of values) {
      const out = redactNotification(value, { pii: false });
      expect(out.id).toContain(REDACTED);
      expect(out.payer_id).toBe(`P${REDACTED}X`);
    }
  });

  it("keeps a card number out of the receiver's own line when an id is one", async () => {
    const { logger, lines, text } = captureLogger();
    const body = notification();
    body.resource.id = `SUB-${fullWidth("4111 1111 1111 1111")}`;
    const receiver = createReceiver({ logger, onRenew: () => {} });
    expect((await receiver.handle({ method: "POST", headers: {}, rawBody: json(body) })).status).toBe(200);
    expect(lines().find((line) => line.msg === "notification handled")).toMatchObject({
      notification_id: body.id,
      subscription_id: "[REDACTED]",
    });
    expect(shows(text(), "4111111111111111")).toBe(false);
  });

  it("redacts a card number written as a payload key, as it redacts one written as a value, losing no member", () => {
    const body = notification();
    body.resource.renewal_event.payment_detail.metadata = { "4111111111111111": "key", "4111 1111 1111 1111": 2, k: 1 };
    const redacted = redactNotification(body, { pii: false });
    expect(redacted.resource.renewal_event.payment_detail.metadata).toEqual({
      "[REDACTED]": "key",
      "[REDACTED] (2)": 2,
      k: 1,
    });
    expect(JSON.stringify(redacted)).not.toContain("4111111111111111");
  });
});
