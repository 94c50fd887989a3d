import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { createReceiver, REDACTED, type SubscriptionNotification } from "merchant-webhooks";
import { bullmqQueue, createWorker, jobIdFor } from "merchant-webhooks/bullmq";
import { createAdmin } from "merchant-webhooks/console";
import { redisStore } from "merchant-webhooks/redis";
import { afterAll, describe, expect, it } from "vitest";
import { runRedrive } from "../../src/cli/commands/redrive.js";
import { captureIo } from "../cli/capture-io.js";
import { silentLogger } from "../support/capture-logger.js";
import { json, notification } from "../support/notifications.js";
import { eventually, REDIS_URL } from "../support/redis.js";
import { suitePrefix } from "./suite-prefix.js";

const PAN = "4111111111111111";
const MASKED = "411111******1111";
const VERIFICATION = ["cvc-901", "cvv-902"];

/** Three renewals of one subscription, in position order, each carrying a card number and verification data. */
function renewals(run: string): Array<Record<string, any>> {
  return [0, 1, 2].map((i) => {
    const body = notification("SUBSCRIPTION_RENEW", `WH-${run}-${i}`);
    body.resource.id = `SUB-${run}`;
    body.resource.update_time = new Date(Date.UTC(2026, 2, 1) + i * 1000).toISOString();
    Object.assign(body.resource.renewal_event.payment_detail.card_info, {
      cvc: "cvc-901",
      CVV2: "cvv-902",
      card_number: PAN,
    });
    return body;
  });
}

/** Every string Redis holds under `prefix`: each key's name and value, whatever its type. */
/** Every key of one case (its name is a part of each key's prefix) and its value, as one text. */
async function everythingUnder(redis: Redis, prefix: string, name: string): Promise<string> {
  const keys = (await redis.keys(`${prefix}*`)).filter((key) => key.includes(`:${name}:`));
  const values = await Promise.all(
    keys.map(async (key) => {
      const type = await redis.type(key);
      if (type === "hash") return JSON.stringify(await redis.hgetall(key));
      if (type === "zset") return JSON.stringify(await redis.zrange(key, 0, -1));
      if (type === "list") return JSON.stringify(await redis.lrange(key, 0, -1));
      if (type === "string") return (await redis.get(key)) ?? "";
      return "";
    }),
  );
  return [...keys, ...values].join("\n");
}

/**
 * An ordered notification through `bullmqQueue` is kept with its claim in the store's mailbox (see
 * `ClaimRequest.carried`), as the job data the queue would hold: sealed under the queue's
 * `encryptionKey`, card numbers masked without one, card verification data never.
 */
describe("an ordered notification's data kept in the mailbox", () => {
  const prefix = suitePrefix("mailbox-data");
  const redis = new Redis(REDIS_URL);
  afterAll(() => redis.disconnect());

  /** Three renewals of one subscription accepted by a receiver with `ordering`, no worker yet. */
  async function accepted(name: string, encryptionKey?: Uint8Array) {
    const storePrefix = `${prefix}${name}:store:`;
    const store = redisStore({ connection: REDIS_URL, prefix: storePrefix });
    const key = encryptionKey ? { encryptionKey } : {};
    const sameQueue = { connection: REDIS_URL, name, prefix, ...key };
    const queue = bullmqQueue(sameQueue);
    const receiver = createReceiver({ logger: silentLogger(), idempotency: store, queue, ordering: true });
    const bodies = renewals(`${name}-${Date.now()}`);
    for (const body of bodies)
      expect((await receiver.handle({ method: "POST", headers: {}, rawBody: json(body) })).status).toBe(200);
    const carried = await redis.keys(`${storePrefix}*:carried`);
    expect(carried).toHaveLength(1);
    /** Run a worker with `onRenew` until `until` holds; everything is closed after. */
    const drain = async (onRenew: (n: SubscriptionNotification) => void, until: () => Promise<boolean>) => {
      const worker = createWorker({ ...sameQueue, idempotency: store, logger: silentLogger(), onRenew });
      try {
        await eventually(until, 15_000, "the mailbox to drain");
      } finally {
        await worker.close();
        await receiver.close();
        await queue.close();
        await store.close();
      }
    };
    return { bodies, carried: carried[0]!, queue, drain };
  }

  async function acceptThenDrain(name: string, encryptionKey?: Uint8Array) {
    const { bodies, carried, queue, drain } = await accepted(name, encryptionKey);
    // The three wait in the mailbox, their data beside them, one drain job in the queue.
    expect(await redis.hlen(carried)).toBe(3);
    const held = await everythingUnder(redis, prefix, name);
    for (const secret of [...VERIFICATION, PAN]) expect(held).not.toContain(secret);
    // Sealed, not even the subscriber's address is in clear.
    if (encryptionKey) expect(held).not.toContain(bodies[0]!.resource.subscriber.email);
    else expect(held).toContain(MASKED);
    expect(await queue.queue.getJobState(jobIdFor(bodies[1]!.id))).toBe("unknown");

    const seen: SubscriptionNotification[] = [];
    // Settled, each one's data leaves the store.
    await drain(
      (n) => void seen.push(n),
      async () => seen.length === 3 && (await redis.exists(carried)) === 0,
    );
    expect(seen.map((n) => n.id)).toEqual(bodies.map((b) => b.id));
    return seen.map((n) => n.resource.renewal_event!.payment_detail!.card_info as Record<string, unknown>);
  }

  it("without an encryption key: card numbers masked, verification data gone, in the store as in the queue", async () => {
    for (const card of await acceptThenDrain("masked"))
      expect(card).toMatchObject({ cvc: REDACTED, CVV2: REDACTED, card_number: MASKED });
  });

  it("with an encryption key: sealed in the store, opened by the worker, verification data still gone", async () => {
    for (const card of await acceptThenDrain("sealed", randomBytes(32)))
      expect(card).toMatchObject({ cvc: REDACTED, CVV2: REDACTED, card_number: PAN });
  });

  it("a worker does not run one notification from another's data moved in the store", async () => {
    const { bodies, carried, drain } = await accepted("moved");
    // Whoever can write to Redis puts the third one's data under the second one's record.
    const fields = await redis.hgetall(carried);
    const second = Object.keys(fields).find((field) => field.endsWith(bodies[1]!.id))!;
    const third = Object.keys(fields).find((field) => field.endsWith(bodies[2]!.id))!;
    await redis.hset(carried, second, fields[third]!);

    const seen: string[] = [];
    await drain(
      (n) => void seen.push(n.id),
      async () => seen.includes(bodies[2]!.id),
    );
    // The second is not run from the third's data, and the third runs once. A waiter's data has one
    // copy, in its lane (docs/ordering.md): with it overwritten, the second is left to a person, its
    // record failed where the console lists it, not run and not dropped.
    expect(seen).toEqual([bodies[0]!.id, bodies[2]!.id]);
    expect(await redis.hget(second, "state")).toBe("failed");

    // Accepted, it is kept where every redrive path finds it: a dead letter in the failed set, listed
    // by the console and the CLI, each saying why it cannot run it (no copy of its own data is left)
    // rather than dropping it or running it from the wrong data.
    const storePrefix = `${prefix}moved:store:`;
    const store = redisStore({ connection: REDIS_URL, prefix: storePrefix });
    const queue = bullmqQueue({ connection: REDIS_URL, name: "moved", prefix });
    const admin = createAdmin({ idempotency: store, queue });
    const cli = async (...args: string[]) => {
      const io = captureIo();
      const code = await runRedrive(["--queue", "moved", "--prefix", prefix, "--redis", REDIS_URL, ...args], io);
      return { code, ...io };
    };
    try {
      const failed = (await admin.listNotifications({ state: "failed" })).items.map((item) => item.id);
      expect(failed).toContain(bodies[1]!.id);
      const redriven = await admin.redrive({ ids: [bodies[1]!.id] });
      expect(redriven).toMatchObject({ redriven: 0, skipped: [{ id: bodies[1]!.id }] });
      expect(redriven.skipped[0]!.reason).toMatch(/holds no notification to run .* and no recorder to replay it from/);
      const listed = await cli("--dry-run");
      expect(listed.code).toBe(1);
      expect(listed.stderr).toContain(`cannot redrive ${bodies[1]!.id}: its data could not be read`);
      const asked = await cli("--id", bodies[1]!.id);
      expect(asked.code).toBe(1);
      expect(asked.stderr).toContain(`cannot redrive ${bodies[1]!.id}`);
      expect(await queue.queue.getJobState(jobIdFor(bodies[1]!.id))).toBe("failed");
      expect(seen).not.toContain(bodies[1]!.id);
      // A person settles it: discarded, it leaves the dead letters, and no redrive offers it again.
      expect(await admin.discard(bodies[1]!.id, { reason: "data overwritten in Redis" })).toMatchObject({
        discarded: true,
      });
      expect((await admin.listNotifications({ state: "failed" })).items.map((item) => item.id)).not.toContain(
        bodies[1]!.id,
      );
      const after = await cli("--dry-run");
      expect(after).toMatchObject({ code: 0, stderr: "" });
      expect(after.stdout).toContain("0 would be redriven");
    } finally {
      await queue.close();
      await store.close();
    }
  });
});
