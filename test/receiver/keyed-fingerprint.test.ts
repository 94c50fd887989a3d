import { createHash, createHmac } from "node:crypto";
import { Redis } from "ioredis";
import { createReceiver, type IdempotencyStore, memoryStore } from "merchant-webhooks";
import { redisStore } from "merchant-webhooks/redis";
import { afterAll, describe, expect, it } from "vitest";
import { DEFAULT_FINGERPRINT_KEY, digestSigner, payloadFingerprinter } from "../../src/receiver/fingerprint.js";
import { canonicalJson } from "../../src/shared/canonical-json.js";
import { silentLogger } from "../support/capture-logger.js";
import { notification } from "../support/notifications.js";
import { REDIS_URL, removeKeys, uniquePrefix } from "../support/redis.js";
import { reserialise } from "../support/reserialise.js";

const post = (text: string) => ({
  method: "POST",
  headers: { "content-type": "application/json" },
  rawBody: new TextEncoder().encode(text),
});
const answerOf = (response: { status: number; body: string }) => [response.status, JSON.parse(response.body)] as const;

const KEY = "a-secret-shared-by-every-receiver";
const fingerprintUnder = (key: string, value: unknown) => payloadFingerprinter(key)(value) as string;
/** What the fingerprint was before the digest walk: the HMAC of the canonical JSON text. */
const canonicalHmacOf = (key: string, value: unknown) =>
  createHmac("sha256", key).update(canonicalJson(value)).digest("hex");
const sha256Of = (value: unknown) => createHash("sha256").update(canonicalJson(value)).digest("hex");

/** A renewal paid by card: the payload the fingerprint covers holds a card number. */
function cardRenewal() {
  const renewal = notification();
  renewal.resource.renewal_event.payment_detail.card_info = { card_no: "4111111111111111", expiry: "12/29" };
  return renewal;
}

describe("the payload fingerprint is a keyed hash (HMAC-SHA-256 of a keyed digest of the JSON value)", () => {
  it("is stored as the HMAC under fingerprintKey, never as the unkeyed SHA-256 of the payload", async () => {
    const store = memoryStore();
    const receiver = createReceiver({ logger: silentLogger(), idempotency: store, fingerprintKey: KEY });
    const renewal = cardRenewal();
    expect((await receiver.handle(post(JSON.stringify(renewal)))).status).toBe(200);
    const stored = (await store.get(renewal.id))!.fingerprint;
    const parsed = JSON.parse(JSON.stringify(renewal));
    expect(stored).toBe(fingerprintUnder(KEY, parsed));
    expect(stored).not.toBe(sha256Of(parsed));
    expect(stored).not.toBe(canonicalHmacOf(KEY, parsed));
    expect(stored).not.toBe(fingerprintUnder(DEFAULT_FINGERPRINT_KEY, parsed));
  });

  it("signs the digest exactly as createHmac does, for keys shorter than, as long as and longer than a block", async () => {
    const crypto = await import("node:crypto");
    for (const length of [16, 40, 63, 64, 65, 200]) {
      const key = crypto.randomBytes(length);
      const sign = digestSigner(crypto, key);
      for (let i = 0; i < 50; i++) {
        const digest = crypto.randomBytes(16);
        expect(sign(digest)).toBe(createHmac("sha256", key).update(digest).digest("hex"));
      }
    }
  });

  it("uses the documented default key when none is given, the same in every receiver", async () => {
    const store = memoryStore();
    const receiver = createReceiver({ logger: silentLogger(), idempotency: store });
    const renewal = notification();
    await receiver.handle(post(JSON.stringify(renewal)));
    expect((await store.get(renewal.id))!.fingerprint).toBe(
      fingerprintUnder(DEFAULT_FINGERPRINT_KEY, JSON.parse(JSON.stringify(renewal))),
    );
  });

  it("refuses a key shorter than 16 bytes at construction", () => {
    expect(() => createReceiver({ logger: silentLogger(), fingerprintKey: "short" })).toThrow(
      "fingerprintKey must be at least 16 bytes",
    );
    expect(() => createReceiver({ logger: silentLogger(), fingerprintKey: new Uint8Array(15) })).toThrow(
      "fingerprintKey must be at least 16 bytes",
    );
  });
});

function sharedKeySuite(name: string, makeStore: () => IdempotencyStore) {
  describe(`receivers sharing a store and a fingerprintKey, on ${name}`, () => {
    it("answer a re-serialised redelivery on another receiver 'already processed', with the handler run once", async () => {
      const store = makeStore();
      let calls = 0;
      const make = () =>
        createReceiver({
          logger: silentLogger(),
          idempotency: store,
          fingerprintKey: KEY,
          onRenew: () => void calls++,
        });
      const renewal = cardRenewal();
      await make().handle(post(JSON.stringify(renewal)));
      // A restarted or second receiver: the key is configuration, not process state.
      const again = await make().handle(post(reserialise(renewal, 1, true)));
      expect(answerOf(again)).toEqual([200, { processed: true, message: "already processed" }]);
      expect(calls).toBe(1);
    });

    it("answer 422 to the same payload fingerprinted under another key (why every receiver needs the same one)", async () => {
      const store = makeStore();
      const renewal = notification();
      await createReceiver({ logger: silentLogger(), idempotency: store, fingerprintKey: KEY }).handle(
        post(JSON.stringify(renewal)),
      );
      const other = createReceiver({
        logger: silentLogger(),
        idempotency: store,
        fingerprintKey: "another-secret-of-16-bytes-or-more",
      });
      expect((await other.handle(post(JSON.stringify(renewal)))).status).toBe(422);
    });
  });
}

sharedKeySuite("memoryStore", () => memoryStore());

const redis = new Redis(REDIS_URL);
const prefix = uniquePrefix("keyed-fingerprint");
afterAll(async () => {
  await removeKeys(redis, prefix);
  redis.disconnect();
});
sharedKeySuite("redisStore", () => redisStore({ connection: redis, prefix }));

describe("in Redis", () => {
  it("the record's fingerprint field holds the HMAC, not the unkeyed SHA-256", async () => {
    const renewal = cardRenewal();
    const receiver = createReceiver({
      logger: silentLogger(),
      idempotency: redisStore({ connection: redis, prefix }),
      fingerprintKey: KEY,
    });
    await receiver.handle(post(JSON.stringify(renewal)));
    const keys = await redis.keys(`${prefix}*`);
    const fields = await Promise.all(
      keys.map((key) => redis.type(key).then((type) => (type === "hash" ? redis.hgetall(key) : {}))),
    );
    const parsed = JSON.parse(JSON.stringify(renewal));
    const fingerprints = fields.map((hash) => (hash as Record<string, string>).fingerprint).filter(Boolean);
    expect(fingerprints).toContain(fingerprintUnder(KEY, parsed));
    expect(fingerprints.join()).not.toContain("4111111111111111");
    expect(fingerprints).not.toContain(sha256Of(parsed));
  });
});
