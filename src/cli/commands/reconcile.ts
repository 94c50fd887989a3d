import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { ReconcileReport, ReconcilerOptions } from "../../reconcile/index.js";
import * as cli from "../args.js";
import { printable } from "../printable.js";
import type { RedisTarget } from "../redis-target.js";

export const RECONCILE_USAGE = `Usage: merchant-webhooks reconcile --api <url> [options]

Find what the platform never delivered: the orders the payment client created (its Redis order
ledger) whose status changed with no processed order event, and subscriptions whose next renewal is
past due with no renewal processed. Audit by default: report only, nothing runs. With --repair the
order handler of --handlers runs once for each order gap, under the same idempotency key as live
delivery. One run at a time across processes; a run that died is resumed from its checkpoint.

Options:
  -a, --api <url>           the payment platform's base address, as given to createPaymentClient (required)
      --since <duration>    look back this far for orders (default 48h): 90m, 24h, 7d
      --settle <duration>   leave orders younger than this alone, their events may be on the way (default 10m)
      --grace <duration>    a renewal is overdue this long after its next_execution_time (default 1h)
      --repair              run the order handler for each order gap (needs --handlers)
      --handlers <module>   a module exporting onOrder (and optionally onOverdue, sign): what the
                            receiver runs for an order event, and the client's request signer
      --merchant-id <id>    sent as merchant_id with each QueryOrder
  -r, --redis <url>         Redis URL (default: $REDIS_URL, else redis://127.0.0.1:6379)
      --prefix <prefix>     the ledger's and journal's key prefix (default: mw:reconcile:)
      --store-prefix <p>    the idempotency store's key prefix, as given to redisStore (default: mw:idem:)
  -h, --help                show this help

Exit status: 0 when no gap is left open and nothing failed, 1 when a gap is open (audit, an overdue
renewal), a check failed or another run holds the lock, 2 on a usage error.

Examples:
  merchant-webhooks reconcile --api https://api.example.com --since 24h
  merchant-webhooks reconcile --api https://api.example.com --since 24h --repair --handlers ./dist/order-handlers.js
`;

const UNITS: Readonly<Record<string, number>> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `90m`, `24h`, `7d`, `500ms` as milliseconds. */
export function durationMs(text: string, option: string): number {
  const match = /^(\d+)(ms|s|m|h|d)$/.exec(text.trim());
  if (!match)
    throw new cli.UsageError(`${option} must be a number and a unit (ms, s, m, h, d), such as 24h; got ${text}`);
  return Number(match[1]) * UNITS[match[2]!]!;
}

/** What a --handlers module may export. */
type HandlersModule = Pick<NonNullable<ReconcilerOptions["handlers"]>, "onOrder" | "onOverdue"> & {
  sign?: import("../../client/transport.js").RequestSigner;
};

async function loadHandlers(path: string): Promise<HandlersModule> {
  const loaded = (await import(pathToFileURL(resolve(path)).href)) as HandlersModule & { default?: HandlersModule };
  const module = loaded.onOrder || loaded.onOverdue || loaded.sign ? loaded : (loaded.default ?? loaded);
  for (const name of ["onOrder", "onOverdue", "sign"] as const)
    if (module[name] !== undefined && typeof module[name] !== "function")
      throw new cli.UsageError(`--handlers: ${name} must be a function`);
  return module;
}

/** `merchant-webhooks reconcile ...`; `argv` is what follows the command name. Resolves to the exit code. */
export async function runReconcile(argv: readonly string[], io: cli.CliIo = cli.processIo()): Promise<number> {
  let values;
  let target: RedisTarget;
  let handlers: HandlersModule = {};
  const times = { since: 48 * UNITS.h!, settle: 10 * UNITS.m!, grace: UNITS.h! };
  const { redisTarget, connectTarget, describeTarget } = await import("../redis-target.js");
  try {
    const parsed = cli.parseCommand(argv, {
      api: { type: "string", short: "a" },
      since: { type: "string" },
      settle: { type: "string" },
      grace: { type: "string" },
      repair: { type: "boolean" },
      handlers: { type: "string" },
      "merchant-id": { type: "string" },
      redis: { type: "string", short: "r", multiple: true },
      prefix: { type: "string" },
      "store-prefix": { type: "string" },
    });
    values = parsed.values;
    const [extra] = parsed.positionals;
    if (values.help) {
      io.out(RECONCILE_USAGE);
      return cli.EXIT_OK;
    }
    if (extra !== undefined) throw new cli.UsageError(`unexpected argument: ${extra}`);
    if (!values.api) throw new cli.UsageError("--api is required: the platform's base address");
    if (!URL.canParse(values.api)) throw new cli.UsageError(`--api must be a URL, got ${values.api}`);
    if (values.since !== undefined) times.since = durationMs(values.since, "--since");
    if (values.settle !== undefined) times.settle = durationMs(values.settle, "--settle");
    if (values.grace !== undefined) times.grace = durationMs(values.grace, "--grace");
    if (values.repair && !values.handlers)
      throw new cli.UsageError("--repair needs --handlers: the module whose onOrder runs for each order gap");
    if (values.handlers) handlers = await loadHandlers(values.handlers);
    target = redisTarget(values.redis, false);
  } catch (err) {
    if (!(err instanceof cli.UsageError)) throw err;
    return cli.reportUsageError(io, err, RECONCILE_USAGE);
  }

  const [{ createPaymentClient }, reconcile, { redisStore }, { closeClient }] = await Promise.all([
    import("../../client/index.js"),
    import("../../reconcile/index.js"),
    import("../../redis/index.js"),
    import("../../redis/connect.js"),
  ]);
  const redis = connectTarget(target);
  redis.on("error", () => {}); // failures reach the calls below, and are reported once there
  const store = redisStore({
    connection: redis,
    ...(values["store-prefix"] ? { prefix: values["store-prefix"] } : {}),
  });
  const keys = values.prefix ? { prefix: values.prefix } : {};
  const { pino } = await import("pino");
  const progress = (line: string) => io.tty && io.out(`\r${line}`);
  const reconciler = reconcile.createReconciler({
    client: createPaymentClient({ baseUrl: values.api, ...(handlers.sign ? { sign: handlers.sign } : {}) }),
    ledger: reconcile.redisOrderLedger(redis, keys),
    journal: reconcile.redisJournal(redis, keys),
    store,
    mode: values.repair ? "repair" : "audit",
    settleMs: times.settle,
    graceMs: times.grace,
    handlers: {
      ...(handlers.onOrder ? { onOrder: handlers.onOrder } : {}),
      ...(handlers.onOverdue ? { onOverdue: handlers.onOverdue } : {}),
    },
    logger: pino({ level: "silent" }),
    onProgress: ({ phase, checked, gaps }) => progress(`${phase}: ${checked} checked, ${gaps} gaps`),
  });
  try {
    const report = await reconciler.run({ lookBackMs: times.since });
    if (io.tty) io.out("\n");
    if (report.status === "busy") {
      io.err("another reconcile run holds the lock; nothing was checked. Run again once it is done.\n");
      return cli.EXIT_NOT_PROCESSED;
    }
    io.out(formatReport(report));
    const open = report.gaps.some((gap) => gap.kind !== "order_status" || !gap.repaired);
    return open || report.errors.length > 0 ? cli.EXIT_NOT_PROCESSED : cli.EXIT_OK;
  } catch (err) {
    io.err(`reconcile failed on ${describeTarget(target)}: ${printable((err as Error).message)}\n`);
    return cli.EXIT_NOT_PROCESSED;
  } finally {
    await closeClient(redis);
  }
}

/**
 *   result                count
 *   orders checked          200
 *   order gaps               40
 *     repaired               40
 *   subscriptions checked    60
 *   renewals overdue          5
 *   errors                    0
 *
 * then one line per gap and per error.
 */
export function formatReport(report: ReconcileReport): string {
  const orderGaps = report.gaps.filter((gap) => gap.kind === "order_status");
  const overdue = report.gaps.filter((gap) => gap.kind === "renewal_overdue");
  const unmatched = report.gaps.filter((gap) => gap.kind === "settlement_unmatched");
  const rows: [string, number][] = [
    ["orders checked", report.checked.orders],
    ["order gaps", orderGaps.length],
    ["  repaired", report.repaired],
    ["subscriptions checked", report.checked.subscriptions],
    ["renewals overdue", overdue.length],
    ...(report.checked.settlements === undefined
      ? []
      : ([
          ["settlements checked", report.checked.settlements],
          ["settlements unmatched", unmatched.length],
        ] as [string, number][])),
    ["errors", report.errors.length],
  ];
  const labelWidth = Math.max("result".length, ...rows.map(([label]) => label.length));
  const countWidth = Math.max("count".length, ...rows.map(([, count]) => String(count).length));
  const line = (label: string, count: string) => `${label.padEnd(labelWidth)}  ${count.padStart(countWidth)}\n`;
  const head = `${report.mode} run ${report.run_id}${report.resumed_from ? ` (resumed ${report.resumed_from})` : ""}, orders created ${report.window.from} to ${report.window.to}\n`;
  const details = [
    ...orderGaps.map(
      (gap) =>
        `order ${printable(gap.order_id)} (${printable(gap.reference_id)}) is ${printable(gap.status)} with no processed event${gap.repaired ? ": repaired" : ""}\n`,
    ),
    ...overdue.map(
      (gap) =>
        `subscription ${printable(gap.subscription_id)}: renewal due ${gap.expected_at} not received; last ${printable(gap.last_notification.event_type)} ${printable(gap.last_notification.id)}\n`,
    ),
    ...unmatched.map(
      (gap) =>
        `order ${printable(gap.order_id)} settled (record ${printable(gap.record_key)}) with no processed event\n`,
    ),
    ...report.errors.map((error) => `error: ${error.kind} ${printable(error.id)}: ${printable(error.message)}\n`),
  ];
  return (
    head +
    line("result", "count") +
    rows.map(([label, count]) => line(label, String(count))).join("") +
    details.join("")
  );
}
