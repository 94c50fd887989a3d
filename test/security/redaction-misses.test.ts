import { createReceiver, REDACTED, type RecordedNotification, redactNotification } from "merchant-webhooks";
import { describe, expect, it } from "vitest";
import { captureLogger } from "../support/capture-logger.js";
import { CARD_TEXTS, EMAIL, leakyNotification, SECRETS } from "../support/card-data.js";
import { json, notification } from "../support/notifications.js";

describe("redaction of what a first review missed", () => {
  it.each(CARD_TEXTS)("finds a card number %s", (_, text, pan) => {
    const out = redactNotification({ note: text }).note;
    expect(out).not.toContain(pan);
    expect(out).toContain(REDACTED);
  });

  it("matches card-secret keys in any case and spelling", () => {
    const out = redactNotification({
      CVV: "1",
      cvv2: "2",
      security_code: "3",
      SecurityCode: "4",
      card_contract_id: "5",
      CardPwd: "6",
      cvc_result: "M",
    });
    expect(out).toEqual({
      CVV: REDACTED,
      cvv2: REDACTED,
      security_code: REDACTED,
      SecurityCode: REDACTED,
      card_contract_id: REDACTED,
      CardPwd: REDACTED,
      cvc_result: "M",
    });
  });

  it("finds a card number after any digits, however grouped by single spaces or tabs", () => {
    const pans = ["4111111111111111", "5555555555554444", "378282246310005", "4222222222222", "6011000990139424"];
    let seed = 7;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    for (let round = 0; round < 400; round++) {
      const pan = pans[round % pans.length]!;
      // Not dashes: ids join their own groups with them (`ORD-20261201-00012345`); see card-scanner.test.ts.
      const sep = [" ", "\t"][random(2)]!;
      let grouped = "";
      for (let i = 0; i < pan.length; i++) grouped += (i > 0 && random(4) === 0 ? sep : "") + pan[i];
      const prefix = Array.from({ length: random(4) }, () => String(random(1000))).join(sep);
      const text = `ref ${prefix}${prefix ? sep : ""}${grouped} end`;
      const out = redactNotification({ note: text }).note;
      expect(out.replace(/[^0-9]/g, ""), text).not.toContain(pan);
    }
  });

  it("leaves ordinary numbers, times and versions readable", () => {
    const text = "order 12345 paid 12.50 at 2026-11-23 10:00:00, version 1.2.3";
    expect(redactNotification({ note: text }).note).toBe(text);
  });

  it("keeps all of it out of ctx.log lines", async () => {
    const { logger, text } = captureLogger();
    const body = leakyNotification();
    const receiver = createReceiver({ logger, onRenew: (n, ctx) => ctx.log.info({ notification: n }, "received") });
    const response = await receiver.handle({ method: "POST", headers: {}, rawBody: json(body) });
    expect(response.status).toBe(200);
    expect(text()).toContain('"msg":"received"');
    for (const secret of SECRETS) expect(text()).not.toContain(secret);
  });

  it("keeps all of it out of recordings", async () => {
    const entries: RecordedNotification[] = [];
    const body = leakyNotification();
    const receiver = createReceiver({
      logger: captureLogger().logger,
      onRenew: () => {},
      record: { write: (entry) => void entries.push(entry) },
    });
    await receiver.handle({ method: "POST", headers: {}, rawBody: json(body) });
    await receiver.close();
    expect(entries).toHaveLength(1);
    const recorded = JSON.stringify(entries[0]);
    for (const secret of SECRETS) expect(recorded).not.toContain(secret);
  });
});

describe("card numbers given as JSON numbers", () => {
  it("are redacted at 13 and 14 digits too, under times, negative or fractional", () => {
    const out = redactNotification({
      a: 4222222222222,
      b: 36227206271667,
      create_time: 4222222222222,
      negative: -4111111111111111,
      fractional: 4222222222222.5,
      small: 12345,
      epoch_ms: 1796140127542,
    });
    expect(out).toEqual({
      a: REDACTED,
      b: REDACTED,
      create_time: REDACTED,
      negative: REDACTED,
      fractional: REDACTED,
      small: 12345,
      epoch_ms: 1796140127542,
    });
  });

  it("are kept out of what a handler logs directly, in the usual spellings", async () => {
    const { logger, text } = captureLogger();
    const receiver = createReceiver({
      logger,
      onRenew: (_, ctx) =>
        ctx.log.info({ CVV: "cvv-7731", securityCode: "sc-7732", card: { cardNumber: "pan-7733" } }, "direct"),
    });
    await receiver.handle({ method: "POST", headers: {}, rawBody: json(notification()) });
    expect(text()).toContain('"msg":"direct"');
    for (const secret of ["cvv-7731", "sc-7732", "pan-7733"]) expect(text()).not.toContain(secret);
  });
});

describe("message strings a handler logs", () => {
  it("are card-redacted, interpolated arguments and children included", async () => {
    const { logger, text } = captureLogger();
    const receiver = createReceiver({
      logger,
      onRenew: (_, ctx) => {
        ctx.log.info(`charging 4111 1111 1111 1111 for ${EMAIL}`);
        ctx.log.warn({ step: 2 }, "retrying card %s", "5555555555554444");
        ctx.log.child({ part: "billing" }).error("declined 378282246310005");
      },
    });
    await receiver.handle({ method: "POST", headers: {}, rawBody: json(notification()) });
    const lines = text();
    expect(lines).toContain("charging [REDACTED] for [REDACTED]");
    expect(lines).toContain("retrying card [REDACTED]");
    expect(lines).toContain('"part":"billing"');
    for (const secret of ["4111 1111 1111 1111", EMAIL, "5555555555554444", "378282246310005"])
      expect(lines).not.toContain(secret);
  });
});
