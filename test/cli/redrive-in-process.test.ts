import { createReceiver, inProcessQueue } from "merchant-webhooks";
import { afterAll, describe, expect, it } from "vitest";
import { type KeptStoreBed, postgresBed, redisBed } from "../queue/fixtures/kept-store-beds.js";
import { silentLogger } from "../support/capture-logger.js";
import { notification, post } from "../support/notifications.js";
import { DATABASE_URL } from "../support/postgres.js";
import { eventually, REDIS_URL } from "../support/redis.js";
import { runCli, runCliProcess, without } from "./run-cli.js";

interface Bed extends KeptStoreBed {
  /** How the CLI names the store in its summary line. */
  where: string;
  /** The optional peers this store's CLI run must not load. */
  others: string[];
}

const database = new URL(DATABASE_URL);

describe.each([
  {
    name: "redisStore",
    open: async (): Promise<Bed> => ({
      ...(await redisBed("cli-redrive-inproc")),
      where: `Redis at ${new URL(REDIS_URL)}`,
      others: ["pg", "bullmq", "pg-boss"],
    }),
  },
  {
    name: "postgresStore",
    open: async (): Promise<Bed> => ({
      ...(await postgresBed("cli_redrive_inproc")),
      where: `PostgreSQL at ${database.hostname}${database.port ? `:${database.port}` : ""}${database.pathname}`,
      others: ["ioredis", "bullmq", "pg-boss"],
    }),
  },
])("merchant-webhooks redrive --in-process on $name", ({ open }) => {
  const closing: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const close of closing.reverse()) await close();
  });

  it("lists the kept dead letter on a dry run, redrives it for a receiver to run once, names ids it cannot", {
    timeout: 90_000,
  }, async () => {
    const bed = await open();
    closing.push(bed.close);

    // An in-process queue's receiver whose handler fails every run until the cause is fixed.
    let fixed = false;
    const runs = new Map<string, number>();
    const receiver = createReceiver({
      logger: silentLogger(),
      idempotency: bed.store,
      leaseMs: 2_000,
      queue: inProcessQueue(),
      onRenew: async (n) => {
        runs.set(n.id, (runs.get(n.id) ?? 0) + 1);
        if (!fixed) throw new Error("downstream refused");
      },
    });
    closing.push(() => receiver.close());
    const accepted = notification();
    expect((await receiver.handle(post(accepted))).status).toBe(200);
    await eventually(async () => (await bed.store.get(accepted.id))?.state === "failed", 15_000, "the dead letter");
    expect(await bed.carried(accepted.id)).toBeDefined();

    // A receiver without a queue refuses what fails (processed: false): failed, nothing kept, its sender retries.
    const refusing = createReceiver({
      logger: silentLogger(),
      idempotency: bed.store,
      onRenew: async () => {
        throw new Error("downstream refused");
      },
    });
    closing.push(() => refusing.close());
    const refused = notification();
    expect((await refusing.handle(post(refused))).status).toBe(500);
    expect(await bed.store.get(refused.id)).toMatchObject({ state: "failed" });

    // As the binary runs, without the other stores' and the queues' peers installed.
    const dry = await runCliProcess(["redrive", "--in-process", ...bed.storeArgs, "--dry-run"], without(...bed.others));
    expect(dry.stderr).toBe("");
    expect(dry.code).toBe(0);
    expect(dry.stdout).toBe(
      `would redrive: ${accepted.id}\n` +
        `1 would be redriven from the store on ${bed.where}\n` +
        "1 failed record without kept data not redriven: a receiver answered processed: false for them, so their sender delivers them again (or a durable queue holds them: redrive --queue or --pg-boss)\n",
    );
    expect(await bed.store.get(accepted.id)).toMatchObject({ state: "failed", attempts: 1 });
    expect(await bed.carried(accepted.id)).toBeDefined();
    expect(runs.get(accepted.id)).toBe(1);

    const unknown = await runCli(["redrive", "--in-process", ...bed.storeArgs, "--id", "WH-NEVER-SEEN"]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe("not redriven: WH-NEVER-SEEN: no record of it in the store\n");
    const notKept = await runCli(["redrive", "--in-process", ...bed.storeArgs, "--id", refused.id, "--dry-run"]);
    expect(notKept.code).toBe(1);
    expect(notKept.stderr).toContain(`not redriven: ${refused.id}: the store kept no data of it:`);

    fixed = true;
    const all = await runCli(["redrive", "--in-process", ...bed.storeArgs]);
    expect(all.stderr).toBe("");
    expect(all.code).toBe(0);
    expect(all.stdout).toContain(`redriven: ${accepted.id}\n1 redriven from the store on ${bed.where}; `);
    await eventually(
      async () => (await bed.store.get(accepted.id))?.state === "completed",
      20_000,
      "the receiver's sweep to run the redriven notification",
    );
    expect(runs.get(accepted.id)).toBe(2);
    expect(await bed.carried(accepted.id)).toBeUndefined();
    // What the store did not keep stays for its sender's next delivery.
    expect(await bed.store.get(refused.id)).toMatchObject({ state: "failed" });
  });
});

describe("merchant-webhooks redrive --in-process usage", () => {
  it("is a usage error beside a queue's options, exit 2", async () => {
    const run = await runCli(["redrive", "--in-process", "--queue", "x"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("--in-process redrives the store's dead letters: --queue, --pg-boss, --prefix");
    expect(run.stdout).toBe("");
  });
});
