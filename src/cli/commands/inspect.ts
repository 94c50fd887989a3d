import { createAdmin } from "../../console/admin.js";
import { jsonlRecordings } from "../../console/jsonl-recordings.js";
import type { NotificationQueue } from "../../queue/queue.js";
import * as cli from "../args.js";
import { printable, printableLines } from "../printable.js";
import { STORE_OPTIONS, storeSource } from "../store-source.js";

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
  -q, --queue <name>       also show the notification's job in this queue (BullMQ, unless --pg-boss)
  -p, --prefix <prefix>    BullMQ key prefix, as given to bullmqQueue (default: bull)
      --pg-boss <url>      the queue is pg-boss's in this PostgreSQL (a connection string): show its
                           job and its dead-letter copy
      --boss-schema <name> pg-boss's schema, as given to new PgBoss (default: pgboss); with --pg-boss
      --dead-letter <name> the dead-letter queue given to pgBossQueue; with --pg-boss
      --recordings <dir>   also show its recording from a jsonlRecorder's directory
  -h, --help               show this help

Exit status: 0 when the notification was found, 1 when nothing is known of it (or a server could not
be reached), 2 on a usage error.

Only what is asked for is loaded: --postgres with --pg-boss needs neither ioredis nor bullmq.

Examples:
  merchant-webhooks inspect WH-123 --queue subscription-notifications --recordings ./recordings
  merchant-webhooks inspect WH-123 --postgres postgres://app@db/shop --pg-boss postgres://app@db/shop \
    --queue subscription-notifications
`;

type Values = ReturnType<typeof parseInspect>["values"];

function parseInspect(argv: readonly string[]) {
  return cli.parseCommand(argv, {
    ...STORE_OPTIONS,
    queue: { type: "string", short: "q" },
    prefix: { type: "string", short: "p" },
    "pg-boss": { type: "string" },
    "boss-schema": { type: "string" },
    "dead-letter": { type: "string" },
    recordings: { type: "string" },
  });
}

/** `merchant-webhooks inspect <id> ...`: prints `getNotification(id)` as JSON. */
export async function runInspect(argv: readonly string[], io: cli.CliIo = cli.processIo()): Promise<number> {
  let values: Values;
  let id: string;
  try {
    const parsed = parseInspect(argv);
    values = parsed.values;
    if (values.help) {
      io.out(INSPECT_USAGE);
      return cli.EXIT_OK;
    }
    if (parsed.positionals.length !== 1) throw new cli.UsageError("give exactly one notification id");
    id = parsed.positionals[0]!;
    if (values["pg-boss"] === undefined && (values["boss-schema"] || values["dead-letter"]))
      throw new cli.UsageError("--boss-schema and --dead-letter need --pg-boss");
    if (values["pg-boss"] !== undefined && !values.queue) throw new cli.UsageError("--pg-boss needs --queue");
    if (values["pg-boss"] !== undefined && values.prefix)
      throw new cli.UsageError("--prefix is BullMQ's: a pg-boss queue has none");
  } catch (err) {
    if (!(err instanceof cli.UsageError)) throw err;
    return cli.reportUsageError(io, err, INSPECT_USAGE);
  }
  const sources = inspectSources(values);
  try {
    const admin = createAdmin({
      idempotency: await sources.store(),
      ...(values.queue ? { queue: await sources.queue(values.queue) } : {}),
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
    if (err instanceof cli.UsageError) return cli.reportUsageError(io, err, INSPECT_USAGE);
    // A peer not installed: the command line names the package to install.
    if ((err as NodeJS.ErrnoException).code === "ERR_MODULE_NOT_FOUND") throw err;
    io.err(`inspect failed on ${sources.where()}: ${printable((err as Error).message)}\n`);
    return cli.EXIT_NOT_PROCESSED;
  } finally {
    await sources.close();
  }
}

/**
 * The store and queue `inspect` reads, each loading its own peer only when asked for: the store's (see
 * store-source.ts), ioredis for a BullMQ queue (on the store's Redis client), pg-boss for a pg-boss queue.
 */
function inspectSources(values: Values) {
  const source = storeSource(values);
  return {
    ...source,
    async queue(name: string): Promise<NotificationQueue> {
      const bossUrl = values["pg-boss"];
      if (bossUrl !== undefined) {
        const { closeBoss, describeDatabase, openBoss } = await import("../pg-boss-connection.js");
        const boss = await openBoss(bossUrl, values["boss-schema"]);
        source.opened(() => closeBoss(boss), `pg-boss on ${describeDatabase(bossUrl)}`);
        await boss.start();
        const { pgBossQueue } = await import("../../pg-boss/pg-boss-queue.js");
        return pgBossQueue({
          boss,
          name,
          ...(values["boss-schema"] ? { schema: values["boss-schema"] } : {}),
          ...(values["dead-letter"] ? { deadLetter: values["dead-letter"] } : {}),
        });
      }
      const { bullmqQueue } = await import("../../bullmq/bullmq-queue.js");
      const bull = bullmqQueue({
        connection: await source.redisClient(),
        name,
        ...(values.prefix ? { prefix: values.prefix } : {}),
      });
      source.opened(() => bull.close());
      return bull;
    },
  };
}
