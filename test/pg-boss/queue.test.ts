import { createReceiver, type HandlerContext, hmacVerifier, type ReceiverResponse } from "merchant-webhooks";
import {
  createPgBossWorker,
  type PgBossNotificationWorker,
  pgBossJobIdFor,
  pgBossQueue,
} from "merchant-webhooks/pg-boss";
import { hmacSigner } from "merchant-webhooks/testing";
import { afterAll, describe, expect, it } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { json, notification } from "../support/notifications.js";
import { eventually } from "../support/redis.js";
import { pgBossBed } from "./fixtures/bed.js";
import { jobStates } from "./fixtures/boss.js";

const post = (body: unknown, headers: Record<string, string> = {}) => ({
  method: "POST",
  headers: { "content-type": "application/json", ...headers },
  rawBody: typeof body === "string" ? new TextEncoder().encode(body) : json(body),
});
const answer = (response: ReceiverResponse) => ({ status: response.status, ...JSON.parse(response.body) });
const accepted = { status: 200, processed: true, message: "accepted for processing" };
const alreadyProcessed = { status: 200, processed: true, message: "already processed" };

describe("pgBossQueue with postgresStore: the claim, the queued mark and the job commit together", () => {
  const bed = pgBossBed("pgbq", (schema) => `CREATE TABLE "${schema}".effects (notification_id text NOT NULL)`);
  const { schema, bossSchema, pool, store } = bed;
  const workers: PgBossNotificationWorker[] = [];
  const effects = (id: string) =>
    pool
      .query(`SELECT count(*)::int AS n FROM "${schema}".effects WHERE notification_id = $1`, [id])
      .then((result) => result.rows[0].n as number);
  const write = async (n: { id: string }, ctx: HandlerContext) => {
    await ctx.transaction.query(`INSERT INTO "${schema}".effects (notification_id) VALUES ($1)`, [n.id]);
  };
  const queueNamed = (name: string, extra: Partial<Parameters<typeof pgBossQueue>[0]> = {}) =>
    pgBossQueue({ boss: bed.boss, name, schema: bossSchema, ...extra });
  const workerOn = (name: string, handlers: Partial<Parameters<typeof createPgBossWorker>[0]> = {}) => {
    const worker = createPgBossWorker({
      boss: bed.boss,
      name,
      schema: bossSchema,
      idempotency: store,
      logger: silentLogger(),
      pollingIntervalMs: 100,
      onRenew: write,
      ...handlers,
    });
    workers.push(worker);
    return worker;
  };

  afterAll(async () => {
    for (const worker of workers) await worker.close({ timeoutMs: 5_000 });
  });

  it("acknowledges once the job is committed; a worker started later runs it once, its write committed with the job", async () => {
    const queue = queueNamed("ack");
    const receiver = createReceiver({ logger: silentLogger(), idempotency: store, queue });
    const body = notification();

    expect(answer(await receiver.handle(post(body)))).toEqual(accepted);
    expect(await store.get(body.id)).toMatchObject({ state: "queued", attempts: 1 });
    expect(await jobStates(pool, bossSchema, "ack")).toEqual({ created: 1 });
    const job = await bed.boss.getJobById("ack", pgBossJobIdFor("ack", body.id));
    // Card verification data never reaches the job; the card number is masked.
    expect(JSON.stringify(job?.data)).not.toMatch(/"cvc"\s*:\s*"\d/);

    const worker = workerOn("ack");
    await worker.waitUntilReady();
    await eventually(async () => (await store.get(body.id))?.state === "completed", 15_000, "the record to complete");
    expect(await effects(body.id)).toBe(1);
    expect(await jobStates(pool, bossSchema, "ack")).toEqual({ completed: 1 });
    expect(answer(await receiver.handle(post(body)))).toEqual(alreadyProcessed);
    expect(await jobStates(pool, bossSchema, "ack")).toEqual({ completed: 1 });
    await receiver.close();
  });

  it("answers by the table: duplicates, a changed payload, bad input and a refusing queue", async () => {
    const queue = queueNamed("table");
    const hmac = { secret: "a-long-enough-table-test-secret-0123456789", header: "x-signature" };
    const receiver = createReceiver({ logger: silentLogger(), idempotency: store, queue, verify: hmacVerifier(hmac) });
    const sign = hmacSigner(hmac);
    const signed = async (body: Record<string, unknown>) => {
      const raw = JSON.stringify(body);
      return post(raw, await sign(raw));
    };
    const body = notification();
    expect(answer(await receiver.handle(await signed(body)))).toEqual(accepted);
    // Queued, not yet run: a redelivery is told it is taken care of, and queues nothing more.
    expect(answer(await receiver.handle(await signed(body)))).toEqual(alreadyProcessed);
    expect(await jobStates(pool, bossSchema, "table")).toEqual({ created: 1 });
    expect((await receiver.handle(post(body, { "x-signature": "bad" }))).status).toBe(401);
    expect((await receiver.handle(await signed({ ...body, id: "" }))).status).toBe(400);

    const worker = workerOn("table");
    await eventually(async () => (await store.get(body.id))?.state === "completed", 15_000, "the record to complete");
    expect(answer(await receiver.handle(await signed(body)))).toEqual(alreadyProcessed);
    const changed = { ...body, create_time: "2026-01-01T00:00:00Z" };
    expect((await receiver.handle(await signed(changed))).status).toBe(422);
    await worker.close({ timeoutMs: 5_000 });

    // A queue whose pg-boss tables are not there refuses: 503, and neither record nor job is left.
    const broken = pgBossQueue({ boss: bed.boss, name: "table", schema: `${schema}_nothing` });
    const refusing = createReceiver({ logger: silentLogger(), idempotency: store, queue: broken });
    const other = notification();
    const refused = await refusing.handle(post(other));
    expect(refused.status).toBe(503);
    expect(refused.headers["retry-after"]).toBeDefined();
    expect(await store.get(other.id)).toBeUndefined();
    expect(await bed.boss.getJobById("table", pgBossJobIdFor("table", other.id))).toBeNull();
    await receiver.close();
    await refusing.close();
  });

  it("takes one job for 20 deliveries of one notification at once, and runs it once", async () => {
    const queue = queueNamed("twenty");
    const receivers = Array.from({ length: 4 }, () =>
      createReceiver({ logger: silentLogger(), idempotency: store, queue }),
    );
    const body = notification();
    const answers = (await Promise.all(Array.from({ length: 20 }, (_, i) => receivers[i % 4]!.handle(post(body))))).map(
      answer,
    );
    expect(answers.filter((a) => a.message === accepted.message)).toHaveLength(1);
    for (const other of answers.filter((a) => a.message !== accepted.message))
      expect([alreadyProcessed, 409]).toContainEqual(other.status === 409 ? 409 : other);
    expect(await jobStates(pool, bossSchema, "twenty")).toEqual({ created: 1 });
    workerOn("twenty");
    await eventually(async () => (await store.get(body.id))?.state === "completed", 15_000, "the record to complete");
    expect(await effects(body.id)).toBe(1);
    for (const receiver of receivers) await receiver.close();
  });

  it("rolls back a failed run's write, retries with back-off, and runs it once when it succeeds", async () => {
    const queue = queueNamed("retry", { jobOptions: { retryLimit: 3, retryDelay: 1, retryBackoff: false } });
    const receiver = createReceiver({ logger: silentLogger(), idempotency: store, queue });
    const attempts: Array<{ attempt: number; at: number }> = [];
    workerOn("retry", {
      onRenew: async (n, ctx) => {
        attempts.push({ attempt: ctx.attempt, at: Date.now() });
        await write(n, ctx);
        if (ctx.attempt < 3) throw new Error("ledger refused");
      },
    });
    const body = notification();
    expect(answer(await receiver.handle(post(body)))).toEqual(accepted);
    await eventually(async () => (await store.get(body.id))?.state === "completed", 20_000, "the third attempt");
    expect(attempts.map((a) => a.attempt)).toEqual([1, 2, 3]);
    // pg-boss's retry delay (1 s here) between attempts.
    expect(attempts[1]!.at - attempts[0]!.at).toBeGreaterThanOrEqual(900);
    expect(await effects(body.id)).toBe(1);
    expect(await jobStates(pool, bossSchema, "retry")).toEqual({ completed: 1 });
    await receiver.close();
  });

  it("fences ctx.transaction: control statements refused, a late write closed out, neither lands", async () => {
    const queue = queueNamed("fenced");
    const receiver = createReceiver({ logger: silentLogger(), idempotency: store, queue });
    const refusals: Array<string | undefined> = [];
    let late: Promise<unknown> | undefined;
    workerOn("fenced", {
      onRenew: async (n, ctx) => {
        await ctx.transaction.query("COMMIT").catch((err: { code?: string }) => refusals.push(err.code));
        // Sent after the handler returns: it must not land in the job's transaction or outside it.
        late = new Promise((resolve) => setTimeout(resolve, 50)).then(() =>
          ctx.transaction.query(`INSERT INTO "${schema}".effects (notification_id) VALUES ($1)`, [`${n.id}-late`]),
        );
        late.catch(() => {});
        await write(n, ctx);
      },
    });
    const body = notification();
    expect(answer(await receiver.handle(post(body)))).toEqual(accepted);
    await eventually(async () => (await store.get(body.id))?.state === "completed", 15_000, "the record to complete");
    await expect(late).rejects.toMatchObject({ code: "MW_TRANSACTION_CLOSED" });
    expect(refusals).toEqual(["MW_TRANSACTION_CONTROL"]);
    expect(await effects(body.id)).toBe(1);
    expect(await effects(`${body.id}-late`)).toBe(0);
    await receiver.close();
  });

  it("health() says up and how many run; close() past its limit aborts the handler and leaves the job for another worker, no attempt used", async () => {
    const queue = queueNamed("closing");
    const receiver = createReceiver({ logger: silentLogger(), idempotency: store, queue });
    let aborted = false;
    const first = workerOn("closing", {
      onRenew: (_n, ctx) =>
        new Promise<void>((_resolve, reject) =>
          ctx.signal.addEventListener("abort", () => {
            aborted = true;
            reject(new Error("stopped"));
          }),
        ),
    });
    expect(await first.health()).toMatchObject({ ok: true, store: "up", queue: "up", running: 0, closed: false });
    const body = notification();
    expect(answer(await receiver.handle(post(body)))).toEqual(accepted);
    await eventually(async () => (await first.health()).running === 1, 10_000, "the handler to start");
    expect(await first.close({ timeoutMs: 200 })).toBe(false);
    expect(aborted).toBe(true);
    expect(await first.health()).toMatchObject({ ok: false, closed: true, running: 0 });
    expect(await jobStates(pool, bossSchema, "closing")).toEqual({ created: 1 });

    workerOn("closing");
    await eventually(async () => (await store.get(body.id))?.state === "completed", 15_000, "another worker to run it");
    expect(await effects(body.id)).toBe(1);
    expect(await jobStates(pool, bossSchema, "closing")).toEqual({ completed: 1 });
    // pg-boss counted no retry: the run cut off by the close was not a failure of the handler.
    const job = await bed.boss.getJobById("closing", pgBossJobIdFor("closing", body.id));
    expect(job?.retryCount).toBe(0);
    await receiver.close();
  });

  it("refuses at start a store that cannot commit with the job, a bad queue name and a misspelt option", async () => {
    const { memoryStore } = await import("merchant-webhooks");
    const base = { boss: bed.boss, name: "refusals", schema: bossSchema, logger: silentLogger() };
    expect(() => createPgBossWorker({ ...base, idempotency: memoryStore() })).toThrow(
      expect.objectContaining({
        code: "MW_INVALID_OPTION",
        option: "idempotency",
        message: expect.stringContaining("postgresStore"),
      }),
    );
    expect(() => pgBossQueue({ boss: bed.boss, name: "no spaces" })).toThrow(
      expect.objectContaining({ code: "MW_INVALID_OPTION", option: "name" }),
    );
    expect(() => createPgBossWorker({ ...base, idempotency: store, concurrency: 0 })).toThrow(
      expect.objectContaining({ code: "MW_INVALID_OPTION", option: "concurrency" }),
    );
    expect(() => pgBossQueue({ boss: bed.boss, name: "x", schema: "no spaces" })).toThrow(
      expect.objectContaining({ code: "MW_INVALID_OPTION", option: "schema" }),
    );
    expect(() => createPgBossWorker({ ...base, idempotency: store, concurency: 2 } as never)).toThrow(
      /unknown option "concurency"\. Did you mean "concurrency"\?/,
    );
    expect(() => pgBossQueue({ boss: {} as never, name: "x" })).toThrow(
      expect.objectContaining({
        code: "MW_INVALID_OPTION",
        option: "boss",
        message: expect.stringMatching(/started PgBoss/),
      }),
    );
  });
});
