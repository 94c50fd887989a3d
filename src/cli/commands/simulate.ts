import { readFile } from "node:fs/promises";
import { createInterface, type Interface } from "node:readline";
import { createPlatformSimulator } from "../../simulator/create-platform-simulator.js";
import {
  DEFAULT_ATTEMPT_TIMEOUT_MS,
  DEFAULT_RETRY_SCHEDULE_MS,
  type PlatformSimulatorOptions,
} from "../../simulator/options.js";
import { SCENARIO_COMMANDS, ScenarioError, scenarioRunner } from "../../simulator/scenario.js";
import { hmacSigner } from "../../testing/signers.js";
import {
  type CliIo,
  delayMilliseconds,
  EXIT_NOT_PROCESSED,
  EXIT_OK,
  MAX_TIMER_MS,
  milliseconds,
  parseCommand,
  portNumber,
  processIo,
  reportUsageError,
  signingFrom,
  UsageError,
} from "../args.js";
import { countsLine, deliveryProgress } from "../delivery-progress.js";
import { durationText } from "../duration-text.js";
import { printable, printableLines } from "../printable.js";

/**
 * The platform's schedule lays its 8 attempts over 27.6 hours: right for a soak test, useless for
 * trying a receiver out. By default the CLI keeps its shape at 1/10000 of its length (9.9 s), and
 * `--real-time` restores it. With 3 s per attempt, a run against a receiver that hangs ends within
 * 34 s: under a minute even on a loaded machine.
 */
const QUICK_FACTOR = 1 / 10_000;
const QUICK_RETRY_SCHEDULE_MS = DEFAULT_RETRY_SCHEDULE_MS.map((ms) => Math.round(ms * QUICK_FACTOR));
/** A quick schedule with the 10 s real limit per attempt would spend 80 s on a receiver that hangs. */
const QUICK_ATTEMPT_TIMEOUT_MS = 3_000;
/** The window --reorder-rate holds notifications back in when --reorder-window is not given. */
const DEFAULT_REORDER_WINDOW_MS = 1_000;

/** Rows of the attempt table printed when Ctrl-C stops a session. */
const ATTEMPTS_SHOWN_ON_STOP = 20;

/** The attempt table's header and its last `count` rows, saying how many earlier ones were left out. */
function latestAttempts(table: string, count: number): string {
  const [header, ...rows] = table.trimEnd().split("\n");
  if (rows.length === 0) return "";
  const earlier = Math.max(0, rows.length - count);
  const note = earlier > 0 ? `(${earlier} earlier ${earlier === 1 ? "attempt" : "attempts"} not shown)\n` : "";
  return `${header}\n${rows.slice(earlier).join("\n")}\n${note}`;
}

const total = (schedule: readonly number[]) => schedule.reduce((sum, ms) => sum + ms, 0);

export const SIMULATE_USAGE = `Usage: merchant-webhooks simulate --webhook-url <url> [options]

Run a local payment platform: the CreateOrder, QueryOrder, RefundPayment and list endpoints on
--port, and subscription notifications delivered to --webhook-url with retries, like the platform.
Commands are read from --scenario, then from standard input, one per line; "quit" (or the end of
input) stops, printing what was not delivered. Each attempt is shown as it is answered (a status line
on a terminal). Ctrl-C stops and prints the latest attempts and the summary; a second Ctrl-C
exits at once.

Options:
      --webhook-url <url>        where subscription notifications go (required)
  -p, --port <port>              port of the API (default: any free port; printed at start)
  -s, --secret <secret>          sign every delivery with this secret (default: unsigned)
      --scheme <scheme>          standard-webhooks (default: a whsec_ secret, webhook-id the
                                 notification id) or hmac (HMAC-SHA256 hex of the body)
      --signature-header <name>  header of the hmac signature (default: x-signature)
      --retry-schedule <ms,...>  delay before each attempt (default: ${QUICK_RETRY_SCHEDULE_MS.join(",")},
                                 the platform's schedule at 1/10000: ${durationText(total(QUICK_RETRY_SCHEDULE_MS))} in all)
      --real-time                the platform's schedule as it is: ${DEFAULT_RETRY_SCHEDULE_MS.join(",")}
                                 (${durationText(total(DEFAULT_RETRY_SCHEDULE_MS))}), and ${DEFAULT_ATTEMPT_TIMEOUT_MS} ms per attempt
      --time-scale <factor>      multiply the schedule and chaos delays, e.g. 0.001 (default: 1)
      --attempt-timeout <ms>     time limit of one attempt (default: ${QUICK_ATTEMPT_TIMEOUT_MS}; ${DEFAULT_ATTEMPT_TIMEOUT_MS} with --real-time)
      --duplicate-rate <0..1>    share of notifications sent twice
      --reorder-rate <0..1>      share of notifications held back, so later ones overtake them
      --reorder-window <ms>      hold them back by up to this long (default: ${DEFAULT_REORDER_WINDOW_MS})
      --delay <ms>               wait this long before every attempt, on top of the schedule
      --reserialize              re-serialise the body on every retry (same JSON, other bytes)
      --seed <n>                 seed of the chaos draws
      --scenario <file>          run the commands in this file first
      --exit                     stop after the scenario instead of reading standard input
  -h, --help                     show this help

${SCENARIO_COMMANDS}

Exit status: 0 when every notification was delivered, 1 when some were not (or the port could not
be opened), 2 on a usage error.

Example:
  merchant-webhooks simulate --port 4010 --webhook-url http://localhost:3000/webhooks/subscriptions
  > create alice
  > renew alice
  > log
`;

const OPTIONS = {
  "webhook-url": { type: "string" },
  port: { type: "string", short: "p" },
  secret: { type: "string", short: "s" },
  scheme: { type: "string" },
  "signature-header": { type: "string" },
  "retry-schedule": { type: "string" },
  "real-time": { type: "boolean" },
  "time-scale": { type: "string" },
  "attempt-timeout": { type: "string" },
  "duplicate-rate": { type: "string" },
  "reorder-rate": { type: "string" },
  "reorder-window": { type: "string" },
  delay: { type: "string" },
  reserialize: { type: "boolean" },
  seed: { type: "string" },
  scenario: { type: "string" },
  exit: { type: "boolean" },
} as const;

type Values = ReturnType<typeof parseCommand<typeof OPTIONS>>["values"];

function rate(text: string, option: string): number {
  const value = Number(text);
  if (text.trim() === "" || !(value >= 0 && value <= 1))
    throw new UsageError(`${option} must be a number from 0 to 1, got ${text}`);
  return value;
}

function timeScale(text: string, longestMs: number): number {
  const value = Number(text);
  if (text.trim() === "" || !(value > 0 && Number.isFinite(value)))
    throw new UsageError(`--time-scale must be a number above 0, such as 0.001, got ${text}`);
  if (longestMs * value > MAX_TIMER_MS)
    throw new UsageError(
      `--time-scale ${text} makes the longest delay ${longestMs * value} ms, beyond ${MAX_TIMER_MS} ms (about 24.8 days), the most a timer can wait`,
    );
  return value;
}

function simulatorOptions(values: Values): PlatformSimulatorOptions {
  const url = values["webhook-url"];
  if (!url) throw new UsageError("--webhook-url is required");
  if (!/^https?:\/\//.test(url) || !URL.canParse(url))
    throw new UsageError(`--webhook-url must be an http or https URL: ${url}`);
  // Standard Webhooks by default, as the platform signs; hmac for an app that uses hmacVerifier.
  const signing = signingFrom(values, "standard-webhooks");
  const realTime = values["real-time"] === true;
  if (realTime && values["time-scale"] !== undefined)
    throw new UsageError("--real-time and --time-scale contradict each other: give one");
  const retrySchedule =
    values["retry-schedule"] !== undefined
      ? values["retry-schedule"].split(",").map((ms) => delayMilliseconds(ms, "--retry-schedule"))
      : realTime
        ? DEFAULT_RETRY_SCHEDULE_MS
        : QUICK_RETRY_SCHEDULE_MS;
  const reorderRate = values["reorder-rate"] === undefined ? undefined : rate(values["reorder-rate"], "--reorder-rate");
  const reorderWindowMs =
    values["reorder-window"] !== undefined
      ? delayMilliseconds(values["reorder-window"], "--reorder-window")
      : reorderRate !== undefined
        ? DEFAULT_REORDER_WINDOW_MS
        : undefined;
  const delayMs = values.delay === undefined ? undefined : delayMilliseconds(values.delay, "--delay");
  const chaos = {
    ...(values["duplicate-rate"] !== undefined
      ? { duplicateRate: rate(values["duplicate-rate"], "--duplicate-rate") }
      : {}),
    ...(reorderWindowMs !== undefined ? { reorderWindowMs } : {}),
    ...(reorderRate !== undefined ? { reorderRate } : {}),
    ...(delayMs !== undefined ? { delayMs } : {}),
    ...(values.reserialize ? { reserializeRetries: true } : {}),
  };
  const longest = Math.max(...retrySchedule, reorderWindowMs ?? 0, delayMs ?? 0);
  const seed = values.seed === undefined ? undefined : Number(values.seed);
  if (values.seed !== undefined && (!/^\d+$/.test(values.seed) || !(seed! < 2 ** 32)))
    throw new UsageError(`--seed must be a whole number from 0 to ${2 ** 32 - 1}, got ${values.seed}`);
  return {
    webhookUrl: url,
    ...(signing?.scheme === "standard-webhooks" ? { secret: signing.secret } : {}),
    ...(signing?.scheme === "hmac" ? { sign: hmacSigner({ secret: signing.secret, header: signing.header }) } : {}),
    retrySchedule,
    ...(values["time-scale"] !== undefined ? { timeScale: timeScale(values["time-scale"], longest) } : {}),
    attemptTimeoutMs:
      values["attempt-timeout"] !== undefined
        ? milliseconds(values["attempt-timeout"], "--attempt-timeout")
        : realTime
          ? DEFAULT_ATTEMPT_TIMEOUT_MS
          : QUICK_ATTEMPT_TIMEOUT_MS,
    ...(seed !== undefined ? { seed } : {}),
    chaos,
  };
}

/** "deliveries: up to 8 attempts over 9.9 s (--real-time: the platform's 27.6 h)" */
function scheduleLine(options: PlatformSimulatorOptions, realTime: boolean): string {
  const schedule = options.retrySchedule ?? DEFAULT_RETRY_SCHEDULE_MS;
  const span = durationText(total(schedule) * (options.timeScale ?? 1));
  const other = realTime ? "" : ` (--real-time: the platform's ${durationText(total(DEFAULT_RETRY_SCHEDULE_MS))})`;
  return `deliveries: up to ${schedule.length} attempts over ${span}${other}\n`;
}

/**
 * Ctrl-C (or SIGTERM) once: stop reading commands, stop delivering, print the summary. Twice: exit at
 * once, for when a stop is waiting on an attempt to a receiver that hangs.
 */
function interruptions(onFirst: () => void, onSecond: () => void) {
  let count = 0;
  let resolve!: () => void;
  const first = new Promise<"interrupted">((done) => (resolve = () => done("interrupted")));
  const handler = () => {
    count++;
    if (count === 1) {
      onFirst();
      resolve();
    } else onSecond();
  };
  process.on("SIGINT", handler).on("SIGTERM", handler);
  return {
    first,
    get happened() {
      return count > 0;
    },
    dispose: () => void process.off("SIGINT", handler).off("SIGTERM", handler),
  };
}

export async function runSimulate(
  argv: readonly string[],
  io: CliIo = processIo(),
  input: NodeJS.ReadableStream = process.stdin,
): Promise<number> {
  let options: PlatformSimulatorOptions;
  let port = 0;
  let scenario: string | undefined;
  let values: Values;
  try {
    ({ values } = parseCommand(argv, OPTIONS));
    if (values.help) {
      io.out(SIMULATE_USAGE);
      return EXIT_OK;
    }
    options = simulatorOptions(values);
    if (values.port !== undefined) port = portNumber(values.port, "--port");
    if (values.scenario !== undefined)
      scenario = await readFile(values.scenario, "utf8").catch(() => {
        throw new UsageError(`cannot read --scenario ${values.scenario}`);
      });
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    return reportUsageError(io, err, SIMULATE_USAGE);
  }

  const progress = deliveryProgress(io);
  const sim = createPlatformSimulator({ ...options, onAttempt: progress.onAttempt });
  try {
    io.out(`listening ${await sim.listen(port)}\n`);
  } catch (err) {
    await sim.close();
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === "EADDRINUSE" ? "the port is in use" : code === "EACCES" ? "permission denied" : String(err);
    io.err(`cannot listen on port ${port}: ${why}\n`);
    return EXIT_NOT_PROCESSED;
  }
  io.out(scheduleLine(options, values["real-time"] === true));

  let lines: Interface | undefined;
  const interrupt = interruptions(
    () => {
      progress.print("stopping (Ctrl-C again to exit at once)\n");
      lines?.close();
    },
    () => {
      progress.finish();
      io.err("exiting at once: deliveries not finished are lost\n");
      process.exit(130);
    },
  );
  const run = scenarioRunner(sim);
  // A bad line is reported and skipped: one typo must not end an interactive session.
  const runLine = async (line: string): Promise<boolean> => {
    if (/^\s*(quit|exit)\s*$/i.test(line)) return false;
    try {
      const answer = await Promise.race([run(line), interrupt.first]);
      if (answer === "interrupted") return false;
      progress.print(printableLines(answer));
    } catch (err) {
      if (!(err instanceof ScenarioError)) throw err;
      progress.finish();
      io.err(`${printable(err.message)}\n`);
    }
    return !interrupt.happened;
  };

  try {
    let going = true;
    for (const line of scenario?.split(/\r?\n/) ?? []) if (going) going = await runLine(line);
    if (going && !values.exit) {
      lines = createInterface({ input, terminal: false });
      for await (const line of lines) if (!(await runLine(line))) break;
    } else if (going) {
      await Promise.race([sim.settled(), interrupt.first]);
    }
    await sim.close();
  } finally {
    interrupt.dispose();
    lines?.close();
  }

  progress.finish();
  // After Ctrl-C the session can no longer be asked for `log`: show its latest attempts with the summary.
  if (interrupt.happened) io.out(printableLines(latestAttempts(sim.attemptTable(), ATTEMPTS_SHOWN_ON_STOP)));
  const { exhausted, pending } = sim.undelivered();
  io.out(`${countsLine(progress.counts)}\n`);
  io.out(printableLines(sim.undeliveredTable()));
  return exhausted.length + pending.length === 0 ? EXIT_OK : EXIT_NOT_PROCESSED;
}
