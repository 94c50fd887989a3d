import { fileURLToPath } from "node:url";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deliver } from "../redis/fixtures/deliver.js";
import { type ReceiverProcess, spawnReceiver } from "../redis/fixtures/spawn-receiver.js";
import { DATABASE_URL } from "../support/postgres.js";
import { eventually, REDIS_URL, removeKeys, sleep, uniquePrefix } from "../support/redis.js";
import { CARD_PWD, CVC, cardNotification, inboxSchema, PAN } from "./fixtures/card-notification.js";

const script = fileURLToPath(new URL("./fixtures/in-process-receiver.ts", import.meta.url));

interface Bed {
  env: Record<string, string>;
  /** The data kept with each record (undefined: none), and its state, as the store holds them. */
  kept(id: string): Promise<{ state: string | undefined; carried: string | undefined }>;
  /** Every kept data in the store, for the scan. */
  allKept(): Promise<string[]>;
  close(): Promise<void>;
}

const redisBed = async (): Promise<Bed> => {
  const prefix = uniquePrefix("inproc");
  const redis = new Redis(REDIS_URL);
  return {
    env: { STORE: "redis", STORE_URL: REDIS_URL, STORE_PREFIX: `${prefix}idem:` },
    async kept(id) {
      const [state, carried] = await redis.hmget(`${prefix}idem:${id}`, "state", "carried");
      return { state: state ?? undefined, carried: carried ?? undefined };
    },
    async allKept() {
      const found: string[] = [];
      let cursor = "0";
      do {
        const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}idem:*`, "COUNT", 1000);
        cursor = next;
        for (const key of keys)
          if ((await redis.type(key)) === "hash") {
            const carried = await redis.hget(key, "carried");
            if (carried) found.push(carried);
          }
      } while (cursor !== "0");
      return found;
    },
    async close() {
      await removeKeys(redis, prefix);
      redis.disconnect();
    },
  };
};

const postgresBed = async (): Promise<Bed> => {
  const inbox = await inboxSchema("inproc");
  return {
    env: { STORE: "postgres", DATABASE_URL, SCHEMA: inbox.schema },
    kept: inbox.record,
    async allKept() {
      const { rows } = await inbox.pool.query<{ carried: string }>(
        `SELECT carried FROM ${inbox.table} WHERE carried IS NOT NULL`,
      );
      return rows.map((row) => row.carried);
    },
    close: inbox.close,
  };
};

describe.each([
  { name: "redisStore", open: redisBed },
  { name: "postgresStore", open: postgresBed },
])("an in-process queue on $name: accepted notifications outlive their receiver", ({ open }) => {
  let bed: Bed;
  const effects = new Redis(REDIS_URL);
  const effectsPrefix = uniquePrefix("inproc-effects");
  const spawned: ReceiverProcess[] = [];
  const spawn = async (extra: Record<string, string>) => {
    const child = await spawnReceiver(
      { ...bed.env, EFFECTS_URL: REDIS_URL, EFFECTS: effectsPrefix, ...extra },
      { script },
    );
    spawned.push(child);
    return child;
  };
  const count = async (what: "started" | "done", id: string) =>
    Number((await effects.get(`${effectsPrefix}${what}:${id}`)) ?? 0);

  beforeAll(async () => {
    bed = await open();
  });
  afterAll(async () => {
    await Promise.all(spawned.map((child) => child.kill()));
    await bed.close();
    await removeKeys(effects, effectsPrefix);
    effects.disconnect();
  });

  it("killed (SIGKILL) with notifications running and waiting, another receiver runs each exactly once, and nothing is kept after", {
    timeout: 120_000,
  }, async () => {
    const first = await spawn({ LEASE_MS: "2000", HANDLER_MS: "1500", CONCURRENCY: "2" });
    const sent = Array.from({ length: 8 }, cardNotification);
    const answers = await Promise.all(sent.map((body) => deliver(first.url, body)));
    expect(answers.map((answer) => answer.status)).toEqual(sent.map(() => 200));
    await eventually(
      async () => (await count("started", sent[0]!.id)) + (await count("started", sent[1]!.id)) > 0,
      15_000,
      "a handler to start",
    );

    // Kept with each record while it waits: never card verification data, never a full card number.
    const kept = await bed.allKept();
    expect(kept.length).toBeGreaterThan(0);
    for (const data of kept) {
      expect(data).not.toContain(CVC);
      expect(data).not.toContain(CARD_PWD);
      expect(data).not.toContain(PAN);
      expect(data).toContain("411111******1111");
    }

    await first.kill();
    const unfinished = (
      await Promise.all(sent.map(async (body) => ((await count("done", body.id)) === 0 ? 1 : 0)))
    ).reduce((a: number, b: number) => a + b, 0);
    expect(unfinished, "the kill came before the queue drained").toBeGreaterThan(0);

    await spawn({ LEASE_MS: "2000", HANDLER_MS: "50" });
    for (const body of sent)
      await eventually(async () => (await bed.kept(body.id)).state === "completed", 60_000, `${body.id} completed`);
    await sleep(500);
    for (const body of sent) expect(await count("done", body.id), body.id).toBe(1);
    // Completed, each record holds no notification data any more.
    for (const body of sent) expect((await bed.kept(body.id)).carried).toBeUndefined();
    expect(await bed.allKept()).toEqual([]);
  });

  it("frozen (SIGSTOP) past its lease, then resumed: another receiver runs each once, the frozen one runs none again", {
    timeout: 120_000,
  }, async () => {
    // Its handlers would take 20 s: mid-run when frozen, and past their time limit when it resumes.
    const frozen = await spawn({ LEASE_MS: "1000", HANDLER_MS: "20000", HANDLER_TIMEOUT_MS: "3000", CONCURRENCY: "1" });
    const sent = Array.from({ length: 3 }, cardNotification);
    for (const body of sent) expect((await deliver(frozen.url, body)).status).toBe(200);
    await eventually(async () => (await count("started", sent[0]!.id)) === 1, 15_000, "the first handler to start");
    frozen.child.kill("SIGSTOP");

    await spawn({ LEASE_MS: "1000", HANDLER_MS: "50" });
    for (const body of sent)
      await eventually(async () => (await bed.kept(body.id)).state === "completed", 60_000, `${body.id} completed`);
    frozen.child.kill("SIGCONT");
    // Time for the resumed receiver to find its claims lost, and its handler's signal aborted.
    await sleep(3_000);

    for (const body of sent) expect(await count("done", body.id), body.id).toBe(1);
    for (const body of sent) expect((await bed.kept(body.id)).state).toBe("completed");
    expect(frozen.child.exitCode).toBeNull();
  });
});
