import { createHash, randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { createReceiver, inProcessQueue } from "merchant-webhooks";
import { postgresStore } from "merchant-webhooks/postgres";
import { redisStore } from "merchant-webhooks/redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COMMANDS } from "../../src/redis/scripts.js";
import { withTimeIndex } from "../../src/redis/time-index.js";
import { silentLogger } from "../support/capture-logger.js";
import { post } from "../support/notifications.js";
import { messagesDuring } from "../support/pg-messages.js";
import { eventually, type OwnRedisServer, ownRedisServer, sleep } from "../support/redis.js";
import { CARD_PWD, CVC, cardNotification, inboxSchema } from "./fixtures/card-notification.js";

/**
 * What an in-process queue costs its store on the two paths that scale: the claim before the 200
 * (the data kept with the claim in one round trip, not a claim and a `kept.keep`), and a receiver's
 * sweep for lapsed kept claims, which reads the kept index by lease, not every processing record:
 * measured with 10,000 unrelated processing records (a busy durable queue sharing the store, long
 * leases) and 3 lapsed kept ones. Redis commands counted with MONITOR on a redis-server of the test's
 * own; PostgreSQL messages counted on the client, rows read with EXPLAIN ANALYZE.
 */
const UNRELATED = 10_000;
const LAPSED = 3;
const ACCEPTED = 20;
const KEY = randomBytes(32);

/** A record script's name (`mwIdemClaim`) by its SHA-1 as the store sends it, with its index writes (EVALSHA's first argument). */
const scriptNames = new Map(
  Object.entries(COMMANDS).map(([name, lua]) => [
    createHash("sha1").update(withTimeIndex(name, lua)).digest("hex"),
    name,
  ]),
);

/** A receiver with an in-process queue (sealing with `KEY`) on `store`, its lease long: one sweep, at start. */
function inProcessReceiver(
  store: ReturnType<typeof redisStore> | ReturnType<typeof postgresStore>,
  onRenew: (event: { id: string }) => Promise<void>,
  concurrency?: number,
) {
  return createReceiver({
    logger: silentLogger(),
    idempotency: store,
    queue: inProcessQueue({ encryptionKey: KEY, ...(concurrency ? { concurrency } : {}) }),
    leaseMs: 60_000,
    onRenew,
  });
}

/** The job data an in-process queue keeps for a notification (sealed here), as its receiver made it. */
function keptData(id: string): string {
  const body = { ...cardNotification(), id };
  const queue = inProcessQueue({ encryptionKey: KEY });
  return queue.carry!({
    id,
    fingerprint: `fp-${id}`,
    notification: body as never,
    headers: {},
    receivedAt: Date.now(),
    owner: "gone-receiver",
  });
}

describe("an in-process queue on redisStore: commands per accepted notification and per sweep (MONITOR)", () => {
  let server: OwnRedisServer;
  let redis: Redis;
  beforeAll(async () => {
    server = await ownRedisServer();
    redis = new Redis(server.url);
  });
  afterAll(async () => {
    redis?.disconnect();
    await server?.stop();
  });

  /** Every command other clients send while `work` runs, by name (a script's by its own name). */
  async function commandsDuring(work: () => Promise<unknown>): Promise<string[]> {
    const own = /addr=(\S+)/.exec(String(await redis.client("INFO")))![1]!;
    const seen: string[] = [];
    const monitor = await redis.monitor();
    monitor.on("monitor", (_time: string, args: string[], source: string) => {
      if (source === own || source === "lua") return;
      const name = String(args[0]).toLowerCase();
      // A script's first call on a connection sends it whole (EVAL): the tests send each once before counting.
      seen.push(name === "evalsha" ? (scriptNames.get(String(args[1])) ?? name) : name);
    });
    try {
      await work();
      // MONITOR's lines arrive after the replies: a moment for the last ones.
      await sleep(200);
    } finally {
      monitor.disconnect();
    }
    return seen;
  }

  it("keeps the notification's data in the claim: one command before each 200", async () => {
    const store = redisStore({ connection: server.url, prefix: "rt-accept:" });
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const ran: string[] = [];
    // One run at a time, held by the warm-up's: the runs' own commands (a lease extended as each
    // starts) come after the count, so every command counted went before a 200.
    const receiver = inProcessReceiver(
      store,
      async (event) => {
        await held;
        ran.push(event.id);
      },
      1,
    );
    try {
      // Its sweep at start, and the claim script's first call (sent whole), before the count.
      expect((await receiver.handle(post({ ...cardNotification(), id: "WH-RT-WARM-UP" }))).status).toBe(200);
      await sleep(300);
      const commands = await commandsDuring(async () => {
        for (let i = 0; i < ACCEPTED; i++) {
          const body = { ...cardNotification(), id: `WH-RT-ACCEPT-${i}` };
          expect((await receiver.handle(post(body))).status).toBe(200);
        }
      });
      expect(ran).toEqual([]);
      expect(commands.filter((name) => name === "mwIdemKeep")).toEqual([]);
      expect(commands.filter((name) => name === "mwIdemClaim")).toHaveLength(ACCEPTED);
      expect(commands, JSON.stringify(commands)).toHaveLength(ACCEPTED);
      // Kept all the same, sealed: no card verification data in the store.
      const carried = await redis.hget("rt-accept:WH-RT-ACCEPT-0", "carried");
      expect(carried).toMatch(/sealed/);
      expect(carried).not.toContain(CVC);
      expect(carried).not.toContain(CARD_PWD);
      release();
      await eventually(async () => ran.length === ACCEPTED + 1, 10_000, "every accepted notification run");
    } finally {
      release();
      await receiver.close();
      await store.close?.();
    }
  }, 60_000);

  it("a receiver's sweep reads the 3 lapsed kept records, not the 10,000 processing ones", async () => {
    const prefix = "rt-sweep:";
    const store = redisStore({ connection: server.url, prefix });
    try {
      for (let from = 0; from < UNRELATED; from += 500) {
        await Promise.all(
          Array.from({ length: Math.min(500, UNRELATED - from) }, (_, i) =>
            store.claim({ id: `busy-${from + i}`, fingerprint: "f", owner: "busy", leaseMs: 600_000 }),
          ),
        );
      }
      for (let i = 0; i < LAPSED; i++) {
        const id = `WH-RT-LAPSED-${i}`;
        const claimed = await store.claim({
          id,
          fingerprint: `fp-${id}`,
          owner: "gone",
          leaseMs: 1,
          carried: keptData(id),
        });
        expect(claimed).toMatchObject({ status: "claimed", kept: true });
      }
      // The take-over script's first call (sent whole), before the count.
      expect(await store.kept!.resume("WH-RT-NONE", "warm-up", 1)).toBeUndefined();
      await sleep(20);

      // What the sweep read before the kept index: every processing record, a page at a time.
      const listing = await commandsDuring(async () => {
        let cursor: string | undefined;
        do {
          const page = await store.list!({ state: "processing", limit: 200, ...(cursor ? { cursor } : {}) });
          cursor = page.cursor;
        } while (cursor);
      });
      expect(listing.length).toBeGreaterThan(UNRELATED);

      const ran: string[] = [];
      let receiver: ReturnType<typeof createReceiver> | undefined;
      const sweeping = await commandsDuring(async () => {
        receiver = inProcessReceiver(store, async (event) => {
          ran.push(event.id);
        });
        await eventually(async () => ran.length === LAPSED, 10_000, "the lapsed kept notifications run");
      });
      await receiver?.close();
      expect(ran.sort()).toEqual(["WH-RT-LAPSED-0", "WH-RT-LAPSED-1", "WH-RT-LAPSED-2"]);
      // One range read of the kept index, then per record its take-over and its completion.
      expect(sweeping.filter((name) => name === "zrangebyscore" || name === "zrevrangebyscore")).toHaveLength(1);
      expect(sweeping.filter((name) => name === "hgetall")).toEqual([]);
      expect(sweeping.filter((name) => name === "mwIdemResume")).toHaveLength(LAPSED);
      expect(sweeping.length, JSON.stringify(sweeping)).toBeLessThanOrEqual(4 * LAPSED + 4);
      console.info(
        `sweep with ${UNRELATED} processing records and ${LAPSED} lapsed kept: ${sweeping.length} commands ` +
          `(${JSON.stringify(sweeping)}); a pass over the processing records: ${listing.length}`,
      );
      // Done, they leave the index: a sweep now finds nothing.
      expect(await store.kept!.lapsed(200)).toEqual([]);
    } finally {
      await store.close?.();
    }
  }, 180_000);
});

describe("an in-process queue on postgresStore: messages per accepted notification and rows per sweep", () => {
  let inbox: Awaited<ReturnType<typeof inboxSchema>>;
  beforeAll(async () => {
    inbox = await inboxSchema("kept_rt");
  });
  afterAll(async () => {
    await inbox?.close();
  });

  it("keeps the notification's data with the claim's commit: no message of its own before the 200", async () => {
    const store = postgresStore({ connection: inbox.pool, schema: inbox.schema });
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const receiver = inProcessReceiver(store, async () => {
      await held;
    });
    try {
      await sleep(300);
      const body = { ...cardNotification(), id: "WH-RT-PG-ACCEPT" };
      const sent = await messagesDuring(async () => expect((await receiver.handle(post(body))).status).toBe(200));
      // The claim (BEGIN with its first statement), its record written, the data kept in the COMMIT's message.
      expect(sent, sent.join("\n---\n")).toHaveLength(3);
      expect(sent.at(-1)).toMatch(/SET carried = .*COMMIT$/s);
      const { carried } = await inbox.record("WH-RT-PG-ACCEPT");
      expect(carried).toMatch(/sealed/);
      expect(carried).not.toContain(CVC);
      expect(carried).not.toContain(CARD_PWD);
    } finally {
      release();
      await receiver.close();
      await store.close?.();
    }
  }, 60_000);

  it("a sweep reads the 3 lapsed kept rows along the kept index, not the 10,000 processing ones", async () => {
    const store = postgresStore({ connection: inbox.pool, schema: inbox.schema });
    try {
      await inbox.pool.query(
        `INSERT INTO ${inbox.table} (id, fingerprint, state, owner, lease_until, attempts)
         SELECT 'busy-' || n, 'f', 'processing', 'busy', clock_timestamp() + interval '10 minutes', 1
         FROM generate_series(1, ${UNRELATED}) AS n`,
      );
      for (let i = 0; i < LAPSED; i++) {
        const id = `WH-RT-PG-LAPSED-${i}`;
        await inbox.pool.query(
          `INSERT INTO ${inbox.table} (id, fingerprint, state, owner, lease_until, attempts, carried)
           VALUES ($1, $2, 'processing', 'gone', clock_timestamp() - interval '1 second', 1, $3)`,
          [id, `fp-${id}`, keptData(id)],
        );
      }
      await inbox.pool.query(`ANALYZE ${inbox.table}`);
      const ids = await store.kept!.lapsed(200);
      expect(ids.sort()).toEqual(["WH-RT-PG-LAPSED-0", "WH-RT-PG-LAPSED-1", "WH-RT-PG-LAPSED-2"]);

      // The rows the sweep's statement reads (EXPLAIN ANALYZE), against a pass over the processing records.
      const rowsRead = async (sql: string) => {
        const { rows } = await inbox.pool.query<{ "QUERY PLAN": Array<{ Plan: PlanNode }> }>(
          `EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`,
        );
        return scanned(rows[0]!["QUERY PLAN"][0]!.Plan);
      };
      const lapsedSql = `SELECT id FROM ${inbox.table} WHERE carried IS NOT NULL AND state = 'processing'
        AND lease_until <= clock_timestamp() ORDER BY lease_until LIMIT 200`;
      const swept = await rowsRead(lapsedSql);
      const processing = await rowsRead(`SELECT id FROM ${inbox.table} WHERE state = 'processing'`);
      console.info(`rows read per sweep: ${swept} (a pass over the processing records: ${processing})`);
      expect(processing).toBeGreaterThanOrEqual(UNRELATED);
      expect(swept).toBeLessThanOrEqual(LAPSED);

      const ran: string[] = [];
      const receiver = inProcessReceiver(store, async (event) => {
        ran.push(event.id);
      });
      try {
        await eventually(async () => ran.length === LAPSED, 10_000, "the lapsed kept notifications run");
      } finally {
        await receiver.close();
      }
      expect(ran.sort()).toEqual(["WH-RT-PG-LAPSED-0", "WH-RT-PG-LAPSED-1", "WH-RT-PG-LAPSED-2"]);
      expect(await store.kept!.lapsed(200)).toEqual([]);
    } finally {
      await store.close?.();
    }
  }, 120_000);
});

interface PlanNode {
  "Node Type": string;
  "Actual Rows": number;
  "Rows Removed by Filter"?: number;
  Plans?: PlanNode[];
}

/** The rows the plan's scans read: those they returned and those their filter passed over. */
function scanned(node: PlanNode): number {
  const own = node["Node Type"].includes("Scan") ? node["Actual Rows"] + (node["Rows Removed by Filter"] ?? 0) : 0;
  return own + (node.Plans ?? []).reduce((sum, child) => sum + scanned(child), 0);
}
