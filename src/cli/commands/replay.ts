import { replayEntries, type ReplayResult } from "../../testing/replay.js";
import { isSourceProblem, readSourceItems, type SourceEntry, type SourceProblem } from "../../testing/read-source.js";
import {
  EXIT_NOT_PROCESSED,
  EXIT_OK,
  parseCommand,
  positiveInteger,
  processIo,
  SENDING_OPTIONS,
  SENDING_USAGE,
  sendingSetup,
  reportUsageError,
  UsageError,
  type CliIo,
} from "../args.js";
import { printable } from "../printable.js";
import { progressBar } from "../progress.js";
import { formatSummaryTable, isProcessed, summarize } from "../summary-table.js";

export const REPLAY_USAGE = `Usage: merchant-webhooks replay <file|dir> --url <url> [options]

Send saved or recorded notifications to a webhook endpoint, as the platform would, and count the
answers. <file|dir> is a .json file (a notification or an array of them), a .jsonl file (one
notification or recorded entry per line, as jsonlRecorder writes), or a directory of such files.
Recorded headers are sent again; signatures are never recorded, so pass --secret to sign.

Options:
${SENDING_USAGE}
  -c, --concurrency <n>          notifications in flight at once (default: 1, in file order)
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
  let entries: SourceEntry[];
  let problems: SourceProblem[];
  let setup;
  let concurrency;
  let listAll;
  try {
    const { values, positionals } = parseCommand(argv, {
      ...SENDING_OPTIONS,
      concurrency: { type: "string", short: "c" },
      all: { type: "boolean" },
    });
    if (values.help) {
      io.out(REPLAY_USAGE);
      return EXIT_OK;
    }
    if (positionals.length !== 1) throw new UsageError("give one file or directory to replay");
    setup = sendingSetup(values);
    concurrency = values.concurrency === undefined ? 1 : positiveInteger(values.concurrency, "--concurrency");
    listAll = values.all === true || io.errTty !== true;
    const items = await readSourceItems(positionals[0]!).catch((err: NodeJS.ErrnoException) => {
      throw new UsageError(err.code === "ENOENT" ? `no such file or directory: ${positionals[0]}` : err.message);
    });
    // An unreadable line is reported with its file and line at the end; the rest is still sent.
    problems = items.filter(isSourceProblem);
    entries = items.filter((item): item is SourceEntry => !isSourceProblem(item));
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    return reportUsageError(io, err, REPLAY_USAGE);
  }

  const progress = progressBar(io, entries.length);
  const results = await replayEntries(setup.url, entries, {
    concurrency,
    headers: setup.headers,
    timeoutMs: setup.timeoutMs,
    ...(setup.sign ? { sign: setup.sign } : {}),
    onResult: (_result, done) => progress.update(done),
  });
  progress.finish();

  const summary = { ...summarize(results), unreadable: problems.length };
  io.out(formatSummaryTable(summary));
  const notProcessed = results.filter((result) => !isProcessed(result));
  const listed = listAll ? notProcessed : notProcessed.slice(0, MAX_LISTED_ON_TERMINAL);
  for (const result of listed) io.err(`${describe(result)}\n`);
  const more = notProcessed.length - listed.length;
  if (more > 0) io.err(`... and ${more} more not processed (--all lists every one)\n`);
  for (const problem of problems) io.err(`${printable(problem.origin)}: not sent: ${printable(problem.error)}\n`);
  if (problems.length > 0)
    io.err(`${problems.length} unreadable ${problems.length === 1 ? "entry was" : "entries were"} not sent\n`);
  return notProcessed.length === 0 && problems.length === 0 ? EXIT_OK : EXIT_NOT_PROCESSED;
}

/** `recordings/x.jsonl:3 WH-123: 401 signature verification failed` */
function describe(result: ReplayResult): string {
  const what = `${result.origin} ${result.id ?? "(no id)"}`;
  if (result.status === 0) return printable(`${what}: no answer: ${result.error ?? "unknown error"}`);
  return printable(`${what}: ${result.status} ${result.answer?.message ?? "(not a webhook answer)"}`);
}
