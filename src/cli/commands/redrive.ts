import { redriveDeadLetters } from "../../queue/redrive-dead-letters.js";
import {
  type CliIo,
  EXIT_NOT_PROCESSED,
  EXIT_OK,
  parseCommand,
  processIo,
  reportUsageError,
  UsageError,
} from "../args.js";
import { printable } from "../printable.js";
import { STORE_OPTIONS } from "../store-source.js";
import type { RedriveTransport } from "./redrive-transport.js";

export const REDRIVE_USAGE = `Usage: merchant-webhooks redrive --queue <name> [options]
       merchant-webhooks redrive --in-process [store options] [--id <id>] [--dry-run]

Move queued notifications whose handler used up its attempts (the queue's failed set, its dead-letter
queue) back to waiting, so the workers run them again. Run it once the cause of the failures is fixed.
With --in-process, mark the dead letters an in-process queue left on redisStore or postgresStore (failed
records whose notification the store kept) to run again: a receiver on that store runs each on its next
sweep, within half a lease.

Options:
  -q, --queue <name>     queue name, as given to bullmqQueue and createWorker, or to pgBossQueue and
                         createPgBossWorker (required, unless --in-process)
      --pg-boss <url>    the queue is pg-boss's in this PostgreSQL (a connection string): redrive its
                         dead-letter queue (<name>_dead_letter unless --dead-letter says)
      --schema <name>    pg-boss's schema, as given to new PgBoss (default: pgboss); with --pg-boss
      --dead-letter <name>  the dead-letter queue given to pgBossQueue; with --pg-boss
  -r, --redis <url>      Redis URL (default: $REDIS_URL, else redis://127.0.0.1:6379); for a Redis
                         Cluster, repeat it or separate URLs with commas, one per startup node
      --cluster          the URL is a node of a Redis Cluster (implied by several URLs)
  -p, --prefix <prefix>  BullMQ key prefix, as given to bullmqQueue (default: bull); on a cluster it
                         needs a hash tag, such as {mw}
      --id <id>          redrive this notification id only; repeat for several (default: all failed)
      --dry-run          list what would be redriven, move nothing
  -h, --help             show this help

With --in-process, the store the receivers were given, as inspect takes it (--redis and --cluster as
above, for redisStore; --id and --dry-run as above):
      --in-process       redrive the store's dead letters, not a queue's; without --id, every failed
                         record whose notification the store kept (those it did not keep were answered
                         processed: false, so their sender delivers them again: counted, not redriven)
      --store-prefix <p> redisStore's key prefix (default: mw:idem:)
      --postgres <url>   the store is postgresStore on this database (a connection string)
      --schema <name>    postgresStore's schema (default: public); with --postgres
      --table <name>     postgresStore's table (default: merchant_webhooks_inbox); with --postgres

Exit status: 0 when everything asked for was redriven, 1 when the queue does not exist (the queues
found are listed), a requested id was not in the failed set (with --in-process: not a dead letter the
store kept; each is named with why), a dead letter's data was lost (it is named, and left for the
console's replay or discard), or a server could not be reached, 2 on a usage error.

Examples:
  merchant-webhooks redrive --queue subscription-notifications --dry-run
  merchant-webhooks redrive --pg-boss postgres://app@db/shop --queue subscription-notifications --dry-run
  merchant-webhooks redrive --queue subscription-notifications --id WH-1234 --id WH-5678
  merchant-webhooks redrive --queue subscription-notifications --prefix "{mw}" \\
    --redis redis://10.0.0.1:7000,redis://10.0.0.2:7000,redis://10.0.0.3:7000
  merchant-webhooks redrive --in-process --postgres postgres://app@db/shop --dry-run
  merchant-webhooks redrive --in-process --redis redis://10.0.0.1:6379 --id WH-1234
`;

/** `merchant-webhooks redrive ...`; `argv` is what follows the command name. Resolves to the exit code. */
export async function runRedrive(argv: readonly string[], io: CliIo = processIo()): Promise<number> {
  let transport: RedriveTransport;
  let values;
  try {
    const parsed = parseCommand(argv, {
      ...STORE_OPTIONS,
      "in-process": { type: "boolean" },
      queue: { type: "string", short: "q" },
      prefix: { type: "string", short: "p" },
      id: { type: "string", multiple: true },
      "dry-run": { type: "boolean" },
      "pg-boss": { type: "string" },
      "dead-letter": { type: "string" },
    });
    values = parsed.values;
    if (values.help) {
      io.out(REDRIVE_USAGE);
      return EXIT_OK;
    }
    if (parsed.positionals.length > 0) throw new UsageError(`unexpected argument: ${parsed.positionals[0]}`);
    // Each transport loads when run, with the peers it needs only: --help loads none.
    if (values["in-process"]) {
      if (values.queue || values["pg-boss"] !== undefined || values.prefix || values["dead-letter"])
        throw new UsageError(
          "--in-process redrives the store's dead letters: --queue, --pg-boss, --prefix and --dead-letter are a queue's",
        );
      if (values.postgres !== undefined && (values.redis || values.cluster || values["store-prefix"]))
        throw new UsageError("--postgres is postgresStore's: --redis, --cluster and --store-prefix are redisStore's");
      if (values.postgres === undefined && (values.schema || values.table))
        throw new UsageError("--schema and --table are postgresStore's: give --postgres");
      // With its store's peer only: pg for --postgres, else ioredis; never bullmq or pg-boss.
      transport = (await import("./redrive-in-process.js")).inProcessTransport(values);
    } else {
      if (values["store-prefix"] || values.postgres !== undefined || values.table)
        throw new UsageError("--store-prefix, --postgres and --table name the store of --in-process");
      if (!values.queue) throw new UsageError("--queue is required (or --in-process, for an in-process queue's)");
      if (values["pg-boss"] !== undefined) {
        if (values.redis || values.cluster || values.prefix)
          throw new UsageError("--pg-boss redrives a pg-boss queue: --redis, --cluster and --prefix are for BullMQ");
        transport = (await import("./redrive-pg-boss.js")).pgBossTransport({
          url: values["pg-boss"],
          queue: values.queue,
          schema: values.schema,
          deadLetter: values["dead-letter"],
          dryRun: values["dry-run"] === true,
        });
      } else {
        if (values.schema || values["dead-letter"]) throw new UsageError("--schema and --dead-letter need --pg-boss");
        // BullMQ and ioredis are optional peers: a pg-boss user need not install bullmq.
        transport = (await import("./redrive-bullmq.js")).bullmqTransport({
          queue: values.queue,
          redis: values.redis,
          cluster: values.cluster === true,
          prefix: values.prefix,
        });
      }
    }
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    return reportUsageError(io, err, REDRIVE_USAGE);
  }
  return redriveOn(transport, { ids: values.id, dryRun: values["dry-run"] === true }, io);
}

/**
 * The one redrive of the command, whatever the transport: the dead letters asked for (all, or each
 * `--id`) put back oldest first in each lane (`redriveDeadLetters`), one line each, then how many.
 * Exit 1 when an id asked for is no dead letter, one could not go back, or the redrive failed.
 */
async function redriveOn(
  transport: RedriveTransport,
  options: { ids?: string[] | undefined; dryRun: boolean },
  io: CliIo,
): Promise<number> {
  try {
    const jobs = await transport.open();
    if (typeof jobs === "string") {
      io.err(jobs);
      return EXIT_NOT_PROCESSED;
    }
    const result = await redriveDeadLetters(jobs, options);
    for (const id of result.redriven) io.out(`${options.dryRun ? "would redrive" : "redriven"}: ${printable(id)}\n`);
    for (const id of result.notFailed) io.err(await transport.notFound(id));
    const refused = result.unrunnable ?? [];
    for (const { id, reason } of refused) io.err(transport.refused(id, reason));
    io.out(transport.summary(result.redriven.length, options.dryRun));
    return result.notFailed.length + refused.length > 0 ? EXIT_NOT_PROCESSED : EXIT_OK;
  } catch (err) {
    if (err instanceof UsageError) return reportUsageError(io, err, REDRIVE_USAGE);
    // A peer not installed is named by the command line (npm install pg).
    if ((err as NodeJS.ErrnoException).code === "ERR_MODULE_NOT_FOUND") throw err;
    io.err(`redrive failed on ${transport.where()}: ${printable((err as Error).message)}\n`);
    return EXIT_NOT_PROCESSED;
  } finally {
    await transport.close();
  }
}
