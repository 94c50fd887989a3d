import { redrive } from "../../bullmq/redrive.js";
import {
  EXIT_NOT_PROCESSED,
  EXIT_OK,
  parseCommand,
  processIo,
  reportUsageError,
  UsageError,
  type CliIo,
} from "../args.js";

export const REDRIVE_USAGE = `Usage: merchant-webhooks redrive --queue <name> [options]

Move queued notifications whose handler used up its attempts (the queue's failed set, its dead-letter
queue) back to waiting, so the workers run them again. Run it once the cause of the failures is fixed.

Options:
  -q, --queue <name>     queue name, as given to bullmqQueue and createWorker (required)
  -r, --redis <url>      Redis URL (default: $REDIS_URL, else redis://127.0.0.1:6379)
  -p, --prefix <prefix>  BullMQ key prefix, as given to bullmqQueue (default: bull)
      --id <id>          redrive this notification id only; repeat for several (default: all failed)
      --dry-run          list what would be redriven, move nothing
  -h, --help             show this help

Exit status: 0 when everything asked for was redriven, 1 when a requested id was not in the failed
set or Redis could not be reached, 2 on a usage error.

Examples:
  merchant-webhooks redrive --queue subscription-notifications --dry-run
  merchant-webhooks redrive --queue subscription-notifications --id WH-1234 --id WH-5678
`;

/** `merchant-webhooks redrive ...`; `argv` is what follows the command name. Resolves to the exit code. */
export async function runRedrive(argv: readonly string[], io: CliIo = processIo()): Promise<number> {
  let values;
  try {
    const parsed = parseCommand(argv, {
      queue: { type: "string", short: "q" },
      redis: { type: "string", short: "r" },
      prefix: { type: "string", short: "p" },
      id: { type: "string", multiple: true },
      "dry-run": { type: "boolean" },
    });
    values = parsed.values;
    if (values.help) {
      io.out(REDRIVE_USAGE);
      return EXIT_OK;
    }
    if (parsed.positionals.length > 0) throw new UsageError(`unexpected argument: ${parsed.positionals[0]}`);
    if (!values.queue) throw new UsageError("--queue is required");
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    return reportUsageError(io, err, REDRIVE_USAGE);
  }

  const dryRun = values["dry-run"] === true;
  try {
    const result = await redrive({
      connection: values.redis ?? process.env.REDIS_URL ?? "redis://127.0.0.1:6379",
      name: values.queue,
      ...(values.prefix ? { prefix: values.prefix } : {}),
      ...(values.id ? { ids: values.id } : {}),
      dryRun,
    });
    for (const id of result.redriven) io.out(`${dryRun ? "would redrive" : "redriven"}: ${id}\n`);
    for (const id of result.notFailed) io.err(`not in the failed set: ${id}\n`);
    io.out(`${result.redriven.length} ${dryRun ? "would be redriven" : "redriven"} from queue ${values.queue}\n`);
    return result.notFailed.length > 0 ? EXIT_NOT_PROCESSED : EXIT_OK;
  } catch (err) {
    io.err(`redrive failed: ${(err as Error).message}\n`);
    return EXIT_NOT_PROCESSED;
  }
}
