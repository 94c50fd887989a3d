import { stat } from "node:fs/promises";
import { isSourceProblem, type SourceEntry, type SourceProblem, sourceItems } from "../../testing/read-source.js";
import { type ReplayResult, replayEntries } from "../../testing/replay.js";
import {
  type CliIo,
  EXIT_NOT_PROCESSED,
  EXIT_OK,
  parseCommand,
  positiveInteger,
  processIo,
  reportUsageError,
  SENDING_OPTIONS,
  SENDING_USAGE,
  sendingSetup,
  UsageError,
} from "../args.js";
import { printable } from "../printable.js";
import { progressBar } from "../progress.js";
import { formatSummaryTable, isProcessed, type ReplaySummary, summarize } from "../summary-table.js";

/** The most `--retry` sends a notification again: a bound, so a receiver that is down ends the run. */
const MAX_RETRIES = 20;

export const REPLAY_USAGE = `Usage: merchant-webhooks replay <file|dir> --url <url> [options]

Send saved or recorded notifications to a webhook endpoint, as the platform would, and count the
answers. <file|dir> is a .json file (a notification or an array of them), a .jsonl file (one
notification or recorded entry per line, as jsonlRecorder writes), or a directory of such files.
Recorded headers are sent again; signatures are never recorded, so pass --secret to sign.

Options:
${SENDING_USAGE}
  -c, --concurrency <n>          notifications in flight at once (default: 1, in file order)
      --retry <n>                send a notification again, up to n times (1 to ${MAX_RETRIES}), while it is
                                 answered 409, 429, 503 or another "try later" (or not at all),
                                 each time after its Retry-After (else 1 s, doubling; at most 30 s)
      --all                      list every notification not processed on a terminal too (stderr
                                 that is not a terminal, such as a file or CI log, always gets all)
  -h, --help                     show this help

A line or file that cannot be read is reported with its file and line, and the rest is still sent.

Exit status: 0 when every notification was answered processed, 1 when some were rejected, got no
answer, or could not be read, 2 on a usage error.

Example:
  merchant-webhooks replay recordings/ --url http://localhost:3000/hook --secret "$WEBHOOK_SECRET"
`;

/** Rejections listed one per line under the table on a terminal; past this many, only counted. */
const MAX_LISTED_ON_TERMINAL = 20;

export async function runReplay(argv: readonly string[], io: CliIo = processIo()): Promise<number> {
  let source: string;
  let setup;
  let concurrency;
  let listAll;
  let retries: number | undefined;
  try {
    const { values, positionals } = parseCommand(argv, {
      ...SENDING_OPTIONS,
      concurrency: { type: "string", short: "c" },
      all: { type: "boolean" },
      retry: { type: "string" },
    });
    if (values.help) {
      io.out(REPLAY_USAGE);
      return EXIT_OK;
    }
    if (positionals.length !== 1) throw new UsageError("give one file or directory to replay");
    setup = sendingSetup(values);
    concurrency = values.concurrency === undefined ? 1 : positiveInteger(values.concurrency, "--concurrency");
    listAll = values.all === true || io.errTty !== true;
    if (values.retry !== undefined) {
      retries = positiveInteger(values.retry, "--retry");
      if (retries > MAX_RETRIES) throw new UsageError(`--retry must be ${MAX_RETRIES} or less, got ${values.retry}`);
    }
    source = positionals[0]!;
    const path = source;
    await stat(path).catch((err: NodeJS.ErrnoException) => {
      throw new UsageError(err.code === "ENOENT" ? `no such file or directory: ${path}` : err.message);
    });
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    return reportUsageError(io, err, REPLAY_USAGE);
  }

  // The source is read twice, a batch at a time, rather than held whole: once to count (for the
  // progress bar), then to send. A recording of millions of lines takes the memory of one batch.
  let total = 0;
  for await (const item of sourceItems(source)) if (!isSourceProblem(item)) total++;
  const progress = progressBar(io, total);
  const summary: ReplaySummary = { sent: 0, processed: 0, stale: 0, rejected: new Map(), failed: 0 };
  const notProcessed: ReplayResult[] = [];
  const problems: SourceProblem[] = [];
  let batch: SourceEntry[] = [];
  const send = async () => {
    const before = summary.sent;
    const results = await replayEntries(setup.url, batch, {
      concurrency,
      headers: setup.headers,
      timeoutMs: setup.timeoutMs,
      ...(setup.sign ? { sign: setup.sign } : {}),
      ...(retries ? { retry: { attempts: retries } } : {}),
      onResult: (_result, done) => progress.update(Math.min(total, before + done)),
    });
    batch = [];
    addTo(summary, summarize(results));
    for (const result of results) if (!isProcessed(result)) notProcessed.push(result);
  };
  for await (const item of sourceItems(source)) {
    if (isSourceProblem(item)) problems.push(item);
    else if (batch.push(item) >= BATCH) await send();
  }
  if (batch.length > 0) await send();
  progress.finish();

  io.out(formatSummaryTable({ ...summary, unreadable: problems.length }));
  const listed = listAll ? notProcessed : notProcessed.slice(0, MAX_LISTED_ON_TERMINAL);
  for (const result of listed) io.err(`${describe(result)}\n`);
  const more = notProcessed.length - listed.length;
  if (more > 0) io.err(`... and ${more} more not processed (--all lists every one)\n`);
  for (const problem of problems) io.err(`${printable(problem.origin)}: not sent: ${printable(problem.error)}\n`);
  if (problems.length > 0)
    io.err(`${problems.length} unreadable ${problems.length === 1 ? "entry was" : "entries were"} not sent\n`);
  return notProcessed.length === 0 && problems.length === 0 ? EXIT_OK : EXIT_NOT_PROCESSED;
}

/** Notifications sent per call of replayEntries: what the command holds in memory at once. */
const BATCH = 1_000;

function addTo(total: ReplaySummary, part: ReplaySummary): void {
  total.sent += part.sent;
  total.processed += part.processed;
  total.stale += part.stale;
  total.failed += part.failed;
  if (part.retried) total.retried = (total.retried ?? 0) + part.retried;
  for (const [status, count] of part.rejected) total.rejected.set(status, (total.rejected.get(status) ?? 0) + count);
}

/** `recordings/x.jsonl:3 WH-123: 401 signature verification failed` */
function describe(result: ReplayResult): string {
  const tries = result.attempts ? ` (after ${result.attempts} attempts)` : "";
  const what = `${result.origin} ${result.id ?? "(no id)"}${tries}`;
  if (result.status === 0) return printable(`${what}: no answer: ${result.error ?? "unknown error"}`);
  return printable(`${what}: ${result.status} ${result.answer?.message ?? "(not a webhook answer)"}`);
}
