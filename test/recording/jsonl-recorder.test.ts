import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import express from "express";
import { hmacVerifier, jsonlRecorder } from "merchant-webhooks";
import { subscriptionWebhook } from "merchant-webhooks/express";
import { buildNotification, replay, signHmac } from "merchant-webhooks/testing";
import request from "supertest";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { silentLogger } from "../support/capture-logger.js";

const SECRET = "whsec-recording-test";
const CVC = "837";
const PAN = "4242 4242 4242 4242";

const HMAC = { secret: SECRET, header: "x-signature" };
const verify = hmacVerifier(HMAC);
const signature = async (body: string) => (await signHmac(body, HMAC))["x-signature"]!;

/** A renewal carrying what must never reach a file: a verification code and a card number in free text. */
function renewalWithCardData() {
  return buildNotification("SUBSCRIPTION_RENEW", {
    resource: {
      renewal_event: {
        payment_detail: { card_info: { cvc: CVC }, metadata: { note: `customer wrote ${PAN} in the memo` } },
      },
    },
  });
}

/** Paths of the leaves where `b` differs from `a`. */
function differingPaths(a: unknown, b: unknown, path = ""): string[] {
  if (a !== null && b !== null && typeof a === "object" && typeof b === "object") {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    return [...keys].flatMap((key) =>
      differingPaths(
        (a as Record<string, unknown>)[key],
        (b as Record<string, unknown>)[key],
        Array.isArray(a) ? `${path}[${key}]` : path ? `${path}.${key}` : key,
      ),
    );
  }
  return Object.is(a, b) ? [] : [path];
}

describe("jsonlRecorder behind a running Express receiver", () => {
  let dir: string;
  let recordings: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "mw-recording-"));
    recordings = join(dir, "nested", "recordings");
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** Deliver `bodies` over HTTP to a recording, verifying receiver; returns the handlers' calls. */
  async function deliver(bodies: unknown[]) {
    const handlers = { onRenew: vi.fn(), onCancel: vi.fn() };
    const webhook = subscriptionWebhook({
      ...handlers,
      verify,
      record: jsonlRecorder({ dir: recordings }),
      logger: silentLogger(),
    });
    const app = express();
    app.post("/hook", webhook);
    const statuses: number[] = [];
    for (const body of bodies) {
      const text = JSON.stringify(body);
      const res = await request(app)
        .post("/hook")
        .set("content-type", "application/json")
        .set("x-signature", await signature(text))
        .set("authorization", "Bearer merchant-api-token")
        .set("x-request-id", `req-${statuses.length + 1}`)
        .send(text);
      statuses.push(res.status);
    }
    await webhook.receiver.close(); // waits for the recording writes and flushes the file
    return { handlers, statuses };
  }

  it("writes one line per notification, to an owner-only file of the UTC day, with headers, time and answer", async () => {
    const renewal = renewalWithCardData();
    const invalid = buildNotification("SUBSCRIPTION_CANCELLED", {
      id: "WH-invalid",
      resource: { execution_phase: "" },
    });
    const before = Date.now();
    const { statuses } = await deliver([renewal, invalid]);
    expect(statuses).toEqual([200, 400]);

    const files = readdirSync(recordings);
    expect(files).toEqual([`notifications-${new Date().toISOString().slice(0, 10)}.jsonl`]);
    const path = join(recordings, files[0]!);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const entries = readFileSync(path, "utf8")
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(entries).toHaveLength(2);
    expect(entries[0].notification.id).toBe(renewal.id);
    expect(entries[0].headers).toMatchObject({ "content-type": "application/json", "x-request-id": "req-1" });
    expect(Date.parse(entries[0].received_at)).toBeGreaterThanOrEqual(before - 1);
    expect(entries[0].answer).toEqual({ status: 200, processed: true, message: "processed" });
    expect(entries[1].answer).toMatchObject({ status: 400, processed: false });
  });

  it("keeps card data, signatures and credentials out of the file", async () => {
    const renewal = renewalWithCardData();
    await deliver([renewal]);
    const text = readdirSync(recordings)
      .map((name) => readFileSync(join(recordings, name), "utf8"))
      .join("");
    expect(text).toContain(renewal.id);
    expect(text).not.toContain(`"${CVC}"`);
    expect(text).not.toContain(PAN);
    expect(text).not.toContain(PAN.replace(/ /g, ""));
    expect(text).not.toContain(await signature(JSON.stringify(renewal)));
    expect(text).not.toContain("merchant-api-token");
    expect(text).not.toMatch(/x-signature|authorization/i);
    expect(text).toContain("411111******1111"); // the masked number is not card data
  });

  it("replays into a fresh receiver: the same handlers get the same notifications, minus redacted fields", async () => {
    const renewal = renewalWithCardData();
    const cancel = buildNotification("SUBSCRIPTION_CANCELLED");
    const original = await deliver([renewal, cancel]);
    expect(original.statuses).toEqual([200, 200]);

    const fresh = { onRenew: vi.fn(), onCancel: vi.fn() };
    const results = await replay(fresh, recordings);
    expect(results.map((r) => [r.id, r.status, r.answer?.processed])).toEqual([
      [renewal.id, 200, true],
      [cancel.id, 200, true],
    ]);
    expect(fresh.onRenew).toHaveBeenCalledTimes(1);
    expect(fresh.onCancel).toHaveBeenCalledTimes(1);

    const [sentRenewal, sentCtx] = original.handlers.onRenew.mock.calls[0]!;
    const [replayedRenewal, replayedCtx] = fresh.onRenew.mock.calls[0]!;
    expect(sentRenewal).toEqual(renewal);
    const detail = "resource.renewal_event.payment_detail";
    expect(differingPaths(sentRenewal, replayedRenewal).sort()).toEqual(
      [
        `${detail}.card_info.cvc`,
        `${detail}.card_info.holder_name`,
        `${detail}.metadata.note`,
        `${detail}.purchase_units[0].payee.email_address`,
        "resource.subscriber.name",
        "resource.subscriber.email",
        "resource.subscriber.ip",
        "resource.subscriber.phone_number",
        ...["region_code", "city", "street", "house_number_or_name", "postal_code"].map(
          (field) => `resource.subscriber.address.${field}`,
        ),
      ].sort(),
    );
    expect(replayedRenewal.resource.renewal_event.payment_detail.metadata.note).toBe(
      "customer wrote [REDACTED] in the memo",
    );
    expect(replayedCtx.headers["x-request-id"]).toBe(sentCtx.headers["x-request-id"]);
    // The cancellation carries no card or personal data beyond the subscriber's.
    expect(
      differingPaths(original.handlers.onCancel.mock.calls[0]![0], fresh.onCancel.mock.calls[0]![0]).every((p) =>
        p.startsWith("resource.subscriber."),
      ),
    ).toBe(true);
  });

  it("appends across recorders and flushes on close", async () => {
    const first = jsonlRecorder({ dir: recordings });
    const second = jsonlRecorder({ dir: recordings });
    const entry = (id: string) => ({
      received_at: "2026-11-23T23:59:59.000Z",
      headers: {},
      notification: { id },
      answer: { status: 200, processed: true, message: "processed" },
    });
    void first.write(entry("a"));
    await first.close();
    void second.write(entry("b"));
    void second.write({ ...entry("c"), received_at: "2026-11-24T00:00:01.000Z" });
    await second.close();
    const read = (day: string) =>
      readFileSync(join(recordings, `notifications-${day}.jsonl`), "utf8")
        .trimEnd()
        .split("\n")
        .map((l) => JSON.parse(l).notification.id);
    expect(read("2026-11-23")).toEqual(["a", "b"]);
    expect(read("2026-11-24")).toEqual(["c"]);
    await expect(first.write(entry("late"))).rejects.toThrow("closed");
  });
});
