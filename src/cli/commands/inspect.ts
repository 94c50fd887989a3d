import { createAdmin } from "../../console/admin.js";
import { jsonlRecordings } from "../../console/jsonl-recordings.js";
import type { IdempotencyStore } from "../../idempotency/store.js";
import type { NotificationQueue } from "../../queue/queue.js";
import { closeClient } from "../../redis/connect.js";
import { redisStore } from "../../redis/redis-store.js";
import * as cli from "../args.js";
import { printable, printableLines } from "../printable.js";
import { connectTarget, describeTarget, type RedisTarget, redisTarget } from "../redis-target.js";

export const INSPECT_USAGE = `Usage: merchant-webhooks inspect <id> [options]

Print what happened to one notification, as the console shows it: its record (state, attempts, last
outcome), its subscription's ordering state, its queued job and its recorded request, all redacted.

Options:
  -r, --redis <url>        Redis URL of the store and the queue (default: $REDIS_URL, else
                           redis://127.0.0.1:6379); for a Redis Cluster, repeat it or separate URLs
                           with commas
      --cluster            the URL is a node of a Redis Cluster (implied by several URLs)
      --store-prefix <p>   redisStore's key prefix (default: mw:idem:)
      --postgres <url>     read the record from postgresStore on this database instead of Redis
      --schema <name>      postgresStore's schema (default: public)
      --table <name>       postgresStore's table (default: merchant_webhooks_inbox)
  -q, --queue <name>       also show the notification's BullMQ job in this queue
  -p, --prefix <prefix>    BullMQ key prefix, as given to bullmqQueue (default: bull)
      --recordings <dir>   also show its recording from a jsonlRecorder's directory
  -h, --help               show this help

Exit status: 0 when the notification was found, 1 when nothing is known of it (or a server could not
be reached), 2 on a usage error.

Example:
  merchant-webhooks inspect WH-123 --queue subscription-notifications --recordings ./recordings
`;

/** `merchant-webhooks inspect <id> ...`: prints `getNotification(id)` as JSON. */
export async function runInspect(argv: readonly string[], io: cli.CliIo = cli.processIo()): Promise<number> {
  let values;
  let id: string;
  let target: RedisTarget;
  try {
    const parsed = cli.parseCommand(argv, {
      redis: { type: "string", short: "r", multiple: true },
      cluster: { type: "boolean" },
      "store-prefix": { type: "string" },
      postgres: { type: "string" },
      schema: { type: "string" },
      table: { type: "string" },
      queue: { type: "string", short: "q" },
      prefix: { type: "string", short: "p" },
      recordings: { type: "string" },
    });
    values = parsed.values;
    if (values.help) {
      io.out(INSPECT_USAGE);
      return cli.EXIT_OK;
    }
    if (parsed.positionals.length !== 1) throw new cli.UsageError("give exactly one notification id");
    id = parsed.positionals[0]!;
    target = redisTarget(values.redis, values.cluster === true);
  } catch (err) {
    if (!(err instanceof cli.UsageError)) throw err;
    return cli.reportUsageError(io, err, INSPECT_USAGE);
  }

  const client = connectTarget(target);
  client.on("error", () => {});
  const closers: Array<() => Promise<unknown>> = [];
  try {
    let store: IdempotencyStore;
    if (values.postgres) {
      const { Pool } = (await import("pg")).default;
      const pool = new Pool({ connectionString: values.postgres, max: 2 });
      closers.push(() => pool.end());
      const { postgresStore } = await import("../../postgres/postgres-store.js");
      store = postgresStore({
        connection: pool,
        ...(values.schema ? { schema: values.schema } : {}),
        ...(values.table ? { table: values.table } : {}),
      });
    } else {
      store = redisStore({
        connection: client,
        timeoutMs: 5_000,
        ...(values["store-prefix"] ? { prefix: values["store-prefix"] } : {}),
      });
    }
    let queue: NotificationQueue | undefined;
    if (values.queue) {
      const { bullmqQueue } = await import("../../bullmq/bullmq-queue.js");
      const bull = bullmqQueue({
        connection: client,
        name: values.queue,
        ...(values.prefix ? { prefix: values.prefix } : {}),
      });
      closers.push(() => bull.close());
      queue = bull;
    }
    const admin = createAdmin({
      idempotency: store,
      ...(queue ? { queue } : {}),
      ...(values.recordings ? { recorder: jsonlRecordings({ dir: values.recordings }) } : {}),
    });
    const detail = await admin.getNotification(id);
    if (!detail) {
      io.err(`nothing is known of ${printable(id)}: no record, job or recording\n`);
      return cli.EXIT_NOT_PROCESSED;
    }
    io.out(`${printableLines(JSON.stringify(detail, null, 2))}\n`);
    return cli.EXIT_OK;
  } catch (err) {
    io.err(`inspect failed on ${describeTarget(target)}: ${printable((err as Error).message)}\n`);
    return cli.EXIT_NOT_PROCESSED;
  } finally {
    for (const close of closers.reverse()) await close().catch(() => {});
    await closeClient(client);
  }
}
