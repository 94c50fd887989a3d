import { readFile } from "node:fs/promises";
import { createInterface } from "node:readline";
import { createPlatformSimulator } from "../../simulator/create-platform-simulator.js";
import { DEFAULT_RETRY_SCHEDULE_MS, type PlatformSimulatorOptions } from "../../simulator/options.js";
import { SCENARIO_COMMANDS, ScenarioError, scenarioRunner } from "../../simulator/scenario.js";
import { standardWebhooksKey } from "../../verify/standard-webhooks-verifier.js";
import {
  EXIT_NOT_PROCESSED,
  EXIT_OK,
  EXIT_USAGE,
  parseCommand,
  positiveInteger,
  processIo,
  UsageError,
  type CliIo,
} from "../args.js";

export const SIMULATE_USAGE = `Usage: merchant-webhooks simulate --webhook-url <url> [options]

Run a local payment platform: the CreateOrder, QueryOrder, RefundPayment and list endpoints on
--port, and subscription notifications delivered to --webhook-url with retries, like the platform.
Commands are read from --scenario, then from standard input, one per line; "quit" (or the end of
input) stops, printing what was not delivered.

Options:
      --webhook-url <url>        where subscription notifications go (required)
  -p, --port <port>              port of the API (default: any free port; printed at start)
  -s, --secret <whsec_...>       sign deliveries with Standard Webhooks (default: unsigned)
      --retry-schedule <ms,...>  delay before each attempt (default: ${DEFAULT_RETRY_SCHEDULE_MS.join(",")})
      --time-scale <factor>      multiply the schedule and chaos delays, e.g. 0.001 (default: 1)
      --attempt-timeout <ms>     time limit of one attempt (default: 10000)
      --duplicate-rate <0..1>    share of notifications sent twice
      --reorder-window <ms>      hold notifications back by up to this long, so later ones overtake
      --reserialize              re-serialise the body on every retry (same JSON, other bytes)
      --seed <n>                 seed of the chaos draws
      --scenario <file>          run the commands in this file first
      --exit                     stop after the scenario instead of reading standard input
  -h, --help                     show this help

${SCENARIO_COMMANDS}

Exit status: 0 when every notification was delivered, 1 when some were not, 2 on a usage error.

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
  "retry-schedule": { type: "string" },
  "time-scale": { type: "string" },
  "attempt-timeout": { type: "string" },
  "duplicate-rate": { type: "string" },
  "reorder-window": { type: "string" },
  reserialize: { type: "boolean" },
  seed: { type: "string" },
  scenario: { type: "string" },
  exit: { type: "boolean" },
} as const;

type Values = ReturnType<typeof parseCommand<typeof OPTIONS>>["values"];

function number(text: string, option: string, min: number, max = Number.POSITIVE_INFINITY): number {
  const value = Number(text);
  if (text.trim() === "" || !Number.isFinite(value) || value < min || value > max)
    throw new UsageError(`${option} must be a number from ${min}${max < Infinity ? ` to ${max}` : ""}, got ${text}`);
  return value;
}

function simulatorOptions(values: Values): PlatformSimulatorOptions {
  const url = values["webhook-url"];
  if (!url) throw new UsageError("--webhook-url is required");
  if (!/^https?:\/\//.test(url) || !URL.canParse(url))
    throw new UsageError(`--webhook-url must be an http or https URL: ${url}`);
  if (values.secret !== undefined) {
    try {
      standardWebhooksKey(values.secret);
    } catch {
      throw new UsageError('--secret must be "whsec_" followed by base64');
    }
  }
  const chaos = {
    ...(values["duplicate-rate"] ? { duplicateRate: number(values["duplicate-rate"], "--duplicate-rate", 0, 1) } : {}),
    ...(values["reorder-window"] ? { reorderWindowMs: number(values["reorder-window"], "--reorder-window", 0) } : {}),
    ...(values.reserialize ? { reserializeRetries: true } : {}),
  };
  return {
    webhookUrl: url,
    ...(values.secret !== undefined ? { secret: values.secret } : {}),
    ...(values["retry-schedule"]
      ? { retrySchedule: values["retry-schedule"].split(",").map((ms) => number(ms, "--retry-schedule", 0)) }
      : {}),
    ...(values["time-scale"] ? { timeScale: number(values["time-scale"], "--time-scale", 0) } : {}),
    ...(values["attempt-timeout"]
      ? { attemptTimeoutMs: positiveInteger(values["attempt-timeout"], "--attempt-timeout") }
      : {}),
    ...(values.seed ? { seed: number(values.seed, "--seed", 0) } : {}),
    chaos,
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
    if (values.port !== undefined) port = values.port === "0" ? 0 : positiveInteger(values.port, "--port");
    if (values.scenario !== undefined)
      scenario = await readFile(values.scenario, "utf8").catch(() => {
        throw new UsageError(`cannot read --scenario ${values.scenario}`);
      });
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    io.err(`${err.message}\n\n${SIMULATE_USAGE}`);
    return EXIT_USAGE;
  }

  const sim = createPlatformSimulator(options);
  io.out(`listening ${await sim.listen(port)}\n`);
  const run = scenarioRunner(sim);
  // A bad line is reported and skipped: one typo must not end an interactive session.
  const runLine = async (line: string): Promise<boolean> => {
    if (/^\s*(quit|exit)\s*$/.test(line)) return false;
    try {
      io.out(await run(line));
    } catch (err) {
      if (!(err instanceof ScenarioError)) throw err;
      io.err(`${err.message}\n`);
    }
    return true;
  };

  let going = true;
  for (const line of scenario?.split(/\r?\n/) ?? []) if (going) going = await runLine(line);
  if (going && !values.exit) {
    const lines = createInterface({ input, terminal: false });
    const stop = () => lines.close();
    process.once("SIGINT", stop).once("SIGTERM", stop);
    for await (const line of lines) if (!(await runLine(line))) break;
    process.off("SIGINT", stop).off("SIGTERM", stop);
  } else if (going) {
    await sim.settled();
  }

  await sim.close();
  const { exhausted, pending } = sim.undelivered();
  io.out(sim.undeliveredTable());
  return exhausted.length + pending.length === 0 ? EXIT_OK : EXIT_NOT_PROCESSED;
}
