import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { createReceiver, jsonlRecorder, type NotificationRecorder, type RecordedNotification } from "merchant-webhooks";
import { bullmqQueue, createWorker } from "merchant-webhooks/bullmq";
import { type Admin, consoleHandler, createAdmin, memoryRecordings } from "merchant-webhooks/console";
import { createPgBossWorker, pgBossQueue } from "merchant-webhooks/pg-boss";
import { redisStore, redisStreamRecorder } from "merchant-webhooks/redis";
import { afterAll, describe, expect, it } from "vitest";
import { pgBossBed } from "../pg-boss/fixtures/bed.js";
import { captureLogger } from "../support/capture-logger.js";
import { cardForms, seeded, showsCard } from "../support/card-forms.js";
import { json, notification } from "../support/notifications.js";
import { eventually, REDIS_URL, removeKeys, uniquePrefix } from "../support/redis.js";

// Every place data rests, after a run of a notification carrying card numbers in generated forms (a
// sample over every separator, digit script and encoding, 13 to 19 digits) and verification values
// under other spellings: Redis (keys and values), pg-boss's and the store's rows, the JSONL, stream and
// memory recordings, the receiver's and the handler's logs, the thrown error (BullMQ's failedReason,
// pg-boss's output and dead letter), and the console's pages and JSON. No full card number, no code.

const random = seeded(2026);
const SAMPLE = cardForms().filter((form) => form.valid && random(12) === 0);
const CODES = ["731-cvv", "cvc-8842", "6621"];

/** A renewal carrying every sampled form in text, in ids, as keys, and verification values in other spellings. */
function carrying(id: string) {
  const body = notification("SUBSCRIPTION_RENEW", id);
  const detail = body.resource.renewal_event.payment_detail;
  Object.assign(detail.card_info, { card_cvv: CODES[0], cvc_code: CODES[1], cardCvc: CODES[2] });
  detail.metadata = Object.fromEntries(
    SAMPLE.flatMap((form, i) => [
      [`note_${i}`, `card ${form.text} on file; cvv is ${1000 + i}`],
      [i % 5 === 0 ? `key ${form.text}` : `ref_${i}_id`, `ORD${form.text}`],
    ]),
  );
  detail.metadata.memo = `cvv:   ${CODES[2]}`;
  return body;
}

/** The error a handler throws, quoting the payload. */
const quoting = () => new Error(`declined: ${SAMPLE.map((form) => form.text).join(" / ")} with cvv ${CODES[2]}`);

/** Fails the test naming each card form (or code) found in `text`, which came from `where`. */
function expectClean(where: string, text: string): void {
  const shown = SAMPLE.filter((form) => showsCard(text, form.pan)).map((form) => form.name);
  expect(shown, `${where} shows ${shown.length} card numbers`).toEqual([]);
  for (const code of CODES) expect(text.includes(code), `${where} holds ${code}`).toBe(false);
}

/** Both recorders' entries at once, and a memory copy. */
function fanOut(...recorders: NotificationRecorder[]): NotificationRecorder {
  return { write: async (entry) => void (await Promise.all(recorders.map((r) => r.write(entry)))) };
}

/** Every page and JSON answer the console has about `id`. */
async function consolePages(admin: Admin, id: string, subscription: string): Promise<Array<[string, string]>> {
  const handler = consoleHandler({ admin, authorize: () => true });
  const paths = [
    "/",
    "/notifications",
    "/dead-letters",
    `/notifications/${encodeURIComponent(id)}`,
    `/subscriptions/${encodeURIComponent(subscription)}`,
    "/api/overview",
    "/api/notifications",
    `/api/notifications/${encodeURIComponent(id)}`,
  ];
  const pages: Array<[string, string]> = [];
  for (const path of paths) {
    const answer = await handler(new Request(`http://console.test/console${path}`));
    expect(answer.status, `${path}: ${answer.status === 200 ? "" : await answer.clone().text()}`).toBe(200);
    pages.push([`console ${path}`, await answer.text()]);
  }
  return pages;
}

describe("card forms at rest", () => {
  it("samples every separator of the generator", () => {
    expect(SAMPLE.length).toBeGreaterThan(150);
  });

  describe("through BullMQ on redisStore, with JSONL, stream and memory recordings", () => {
    const prefix = uniquePrefix("card-rest");
    const redis = new Redis(REDIS_URL);
    const dir = mkdtempSync(join(tmpdir(), "mw-card-rest-"));
    afterAll(async () => {
      await removeKeys(redis, prefix);
      redis.disconnect();
      rmSync(dir, { recursive: true, force: true });
    });

    it("leaves no card number and no code in Redis, files, logs, failedReason or the console", async () => {
      const store = redisStore({ connection: REDIS_URL, prefix: `${prefix}idem:` });
      const queue = bullmqQueue({ connection: REDIS_URL, name: "rest", prefix, jobOptions: { attempts: 1 } });
      const memory = memoryRecordings();
      const jsonl = jsonlRecorder({ dir });
      const stream = redisStreamRecorder({ connection: REDIS_URL, stream: `${prefix}recording` });
      const receiverLog = captureLogger();
      const workerLog = captureLogger();
      const receiver = createReceiver({
        logger: receiverLog.logger,
        idempotency: store,
        queue,
        record: fanOut(memory, jsonl, stream),
      });
      const worker = createWorker({
        connection: REDIS_URL,
        name: "rest",
        prefix,
        idempotency: store,
        logger: workerLog.logger,
        onRenew: async (n, ctx) => {
          ctx.log.info({ notification: n }, "received");
          ctx.log.info(`metadata ${JSON.stringify(n.resource.renewal_event?.payment_detail?.metadata)}`);
          throw quoting();
        },
      });
      const body = carrying(`WH-rest-${Date.now()}`);
      const answer = await receiver.handle({ method: "POST", headers: {}, rawBody: json(body) });
      expect(answer.status).toBe(200);
      await eventually(async () => (await store.get(body.id))?.state === "failed", 20_000, "the failed run");
      await worker.close({ timeoutMs: 5_000 });
      await jsonl.close();
      await stream.close();

      const places: Array<[string, string]> = [];
      for (const key of await redis.keys(`${prefix}*`)) {
        places.push([`redis key name ${key}`, key]);
        const type = await redis.type(key);
        const value =
          type === "string"
            ? await redis.get(key)
            : type === "hash"
              ? await redis.hgetall(key)
              : type === "list"
                ? await redis.lrange(key, 0, -1)
                : type === "set"
                  ? await redis.smembers(key)
                  : type === "zset"
                    ? await redis.zrange(key, 0, -1, "WITHSCORES")
                    : type === "stream"
                      ? await redis.xrange(key, "-", "+")
                      : null;
        places.push([`redis ${type} ${key}`, JSON.stringify(value)]);
      }
      expect(places.some(([, text]) => text.includes("failedReason"))).toBe(true);
      for (const file of readdirSync(dir)) places.push([`jsonl ${file}`, readFileSync(join(dir, file), "utf8")]);
      places.push(["memory recording", JSON.stringify(memory.find(body.id) as RecordedNotification)]);
      places.push(["receiver log", receiverLog.text()], ["worker log", workerLog.text()]);
      expect(workerLog.text()).toContain('"msg":"received"');
      const admin = createAdmin({ idempotency: store, queue, recorder: memory });
      places.push(...(await consolePages(admin, body.id, body.resource.id)));
      await receiver.close();
      await store.close();
      for (const [where, text] of places) expectClean(where, text);
    }, 60_000);
  });

  describe("through pg-boss on postgresStore", () => {
    const bed = pgBossBed("cardrest", () => "SELECT 1");

    it("leaves no card number and no code in any row of the store or pg-boss, the dead letter included", async () => {
      const { pool, store, schema, bossSchema } = bed;
      const queue = pgBossQueue({
        boss: bed.boss,
        name: "rest",
        schema: bossSchema,
        jobOptions: { retryLimit: 0 },
      });
      const log = captureLogger();
      const memory = memoryRecordings();
      const receiver = createReceiver({ logger: log.logger, idempotency: store, queue, record: memory });
      const worker = createPgBossWorker({
        boss: bed.boss,
        name: "rest",
        schema: bossSchema,
        idempotency: store,
        logger: log.logger,
        pollingIntervalMs: 100,
        onRenew: async (n, ctx) => {
          ctx.log.info({ notification: n }, "received");
          throw quoting();
        },
      });
      const body = carrying(`WH-rest-pg-${Date.now()}`);
      expect((await receiver.handle({ method: "POST", headers: {}, rawBody: json(body) })).status).toBe(200);
      await eventually(async () => (await store.get(body.id))?.state === "failed", 20_000, "the failed run");
      await worker.close({ timeoutMs: 2_000 });
      await receiver.close();

      const places: Array<[string, string]> = [];
      for (const s of [schema, bossSchema]) {
        const tables = await pool.query(
          "SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND table_type = 'BASE TABLE'",
          [s],
        );
        for (const { table_name } of tables.rows) {
          const rows = await pool.query(`SELECT * FROM "${s}"."${table_name}"`);
          places.push([`${s}.${table_name}`, JSON.stringify(rows.rows)]);
        }
      }
      expect(places.some(([where, text]) => where.endsWith(".job") && text.includes("_dead_letter"))).toBe(true);
      places.push(["log", log.text()]);
      expect(log.text()).toContain('"msg":"received"');
      places.push(
        ...(await consolePages(createAdmin({ idempotency: store, recorder: memory }), body.id, body.resource.id)),
      );
      for (const [where, text] of places) expectClean(where, text);
    }, 60_000);
  });
});
