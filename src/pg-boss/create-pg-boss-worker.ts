import type PgBoss from "pg-boss";
import type { Logger } from "pino";
import type { Handler, HandlerHooks, SubscriptionHandlers } from "../dispatch/handlers.js";
import type { PlatformOption } from "../dispatch/platform-handle.js";
import type { IdempotencyStore } from "../idempotency/store.js";
import { claimsInTransaction } from "../idempotency/transaction.js";
import type { RedactOptions } from "../logging/redact.js";
import type { HealthOptions } from "../receiver/health.js";
import type { CloseOptions } from "../shared/close-options.js";
import { optionError } from "../shared/errors.js";
import type { KnownKeys } from "../shared/option-keys.js";
import { recheckDelay } from "../worker/recheck-delay.js";
import { RUN_OPTION_KEYS } from "../worker/run-settings.js";
import type { EncryptionKey } from "../worker/seal.js";
import {
  prepareRuns,
  rejectUnknownWorkerKeys,
  type WorkerHealth,
  workerControls,
  workerLogger,
} from "../worker/worker-lifecycle.js";
import { checkBoss, checkStarted, pgBossQueue, queueName } from "./pg-boss-queue.js";
import { restoringEvery } from "./restore-archived.js";
import { type PgBossRunner, type ReadyJob, runJob } from "./run-job.js";

export interface CreatePgBossWorkerOptions extends SubscriptionHandlers, HandlerHooks, PlatformOption {
  /** The merchant's `PgBoss`, started, on the database `idempotency` uses. */
  boss: PgBoss;
  /** Queue name, as given to `pgBossQueue`. */
  name: string;
  /** pg-boss's schema, as given to `new PgBoss({ schema })`. Default `pgboss`. */
  schema?: string;
  /** The receivers' `postgresStore`: each job's claim, handler writes and completion are one of its transactions. */
  idempotency: IdempotencyStore;
  /** Jobs run at once by this worker. Default 10; each holds one of the store's pool connections while it runs. */
  concurrency?: number;
  /** Gets the notifications of receivers with `ordering` that are stale when their turn comes. */
  onStale?: Handler;
  /** A pino logger. Default: pino to stdout, named `merchant-webhooks`. */
  logger?: Logger;
  /** What `ctx.log` redacts beyond card data. Default `{ pii: true }`. */
  redact?: RedactOptions;
  /** Time a handler may take before `ctx.signal` aborts and the attempt fails. Default 60 s; 0 for none. */
  handlerTimeoutMs?: number;
  /** Lease of claims outside a transaction (the store's by default). */
  leaseMs?: number;
  /** How often an idle worker looks for jobs. Default 1 s; a worker that just finished one looks at once. */
  pollingIntervalMs?: number;
  /** The key given to `pgBossQueue`, to open sealed jobs; during a rotation, the new and the old key. */
  encryptionKey?: EncryptionKey | readonly EncryptionKey[];
}

/** `receiver.health()`'s shape, for the worker: its store and queue, and how many jobs it is running. */
export interface PgBossWorkerHealth extends WorkerHealth {}

export interface PgBossNotificationWorker {
  /**
   * Resolves once pg-boss is started, the queues exist, pg-boss's job table is readable and the
   * store's tables are there; else rejects with `MW_PGBOSS_SETUP` (or the store's `MW_MISSING_TABLE`).
   * The worker keeps trying meanwhile, and runs its jobs once the set-up is put right.
   */
  waitUntilReady(): Promise<void>;
  /** Pings the store and pg-boss within `timeoutMs` (default 500 ms); `ok` is false once closed. */
  health(options?: HealthOptions): Promise<PgBossWorkerHealth>;
  /**
   * Stop taking jobs and wait up to `timeoutMs` (default 30 s) for running handlers. Past it, their
   * `ctx.signal` aborts; a run that does not commit rolls back, and its job is ready again at once
   * for another worker, no attempt used. Resolves true when every running handler finished in time.
   */
  close(options?: CloseOptions): Promise<boolean>;
}

const WORKER_KEYS = {
  ...RUN_OPTION_KEYS,
  boss: true,
  name: true,
  schema: true,
  idempotency: true,
  concurrency: true,
  pollingIntervalMs: true,
} as const satisfies KnownKeys<Omit<CreatePgBossWorkerOptions, keyof SubscriptionHandlers | keyof HandlerHooks>>;

/**
 * Work a pg-boss queue: the same typed handlers and context as a receiver, each job's handler run in
 * one PostgreSQL transaction with its claim, its writes through `ctx.transaction`, its record's
 * completion and its job's completion, so they commit together or not at all.
 */
export function createPgBossWorker(options: CreatePgBossWorkerOptions): PgBossNotificationWorker {
  rejectUnknownWorkerKeys("createPgBossWorker", options, WORKER_KEYS);
  const boss = checkBoss("createPgBossWorker", options?.boss);
  const name = queueName("createPgBossWorker", options.name);
  const store = options.idempotency;
  if (!store || !claimsInTransaction(store))
    throw optionError(
      new TypeError(
        "createPgBossWorker: idempotency must be the receivers' postgresStore, on the database pg-boss uses: each job's handler, record and job commit in one of its transactions",
      ),
      "MW_INVALID_OPTION",
      "idempotency",
    );
  if ((store as { orm?: unknown }).orm !== undefined)
    throw optionError(
      new TypeError(
        "createPgBossWorker: idempotency must be a postgresStore without `orm`: the job is taken and settled with pg-boss's own SQL on a pg client in the claim's transaction (receivers on the same tables may keep theirs)",
      ),
      "MW_INVALID_OPTION",
      "idempotency",
    );
  const concurrency = options.concurrency ?? 10;
  if (!Number.isInteger(concurrency) || concurrency < 1)
    throw optionError(
      new RangeError(`createPgBossWorker: concurrency must be a whole number, 1 or more; got ${concurrency}`),
      "MW_INVALID_OPTION",
      "concurrency",
    );
  const pollingIntervalMs = options.pollingIntervalMs ?? 1_000;
  if (!(pollingIntervalMs > 0))
    throw optionError(
      new RangeError("createPgBossWorker: pollingIntervalMs must be a positive number of milliseconds"),
      "MW_INVALID_TIMEOUT",
      "pollingIntervalMs",
    );
  const logger = workerLogger(options);
  const { settings, shutdown } = prepareRuns(options, store, logger);
  const queue = pgBossQueue({ boss, name, ...(options.schema ? { schema: options.schema } : {}) });
  let stopping = false;

  const runner: PgBossRunner = {
    ...settings,
    store,
    boss,
    name,
    table: queue.table,
    jobIdFor: queue.jobIdFor,
    stopping: () => stopping,
  };
  // pg-boss re-emits its pool's errors (a dropped connection) on the boss: unheard, they would crash the process.
  const onBossError = (err: unknown) => logger.warn({ err }, "pg-boss reported an error");
  boss.on("error", onBossError);

  /** Jobs running here, and jobs held elsewhere that are not looked at again before their time. */
  const inHand = new Map<string, Promise<void>>();
  const putOff = new Map<string, { until: number; times: number }>();
  let wake: () => void = () => {};
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });

  function start(job: ReadyJob): void {
    const run = runJob(job, runner)
      .then(
        (visit) => {
          if (visit.done) return void putOff.delete(job.id);
          const times = (putOff.get(job.id)?.times ?? 0) + 1;
          // A job held elsewhere is looked at again after 100 ms, doubling each time, up to 5 s.
          const delay = visit.retryInMs ?? recheckDelay(times);
          putOff.set(job.id, { until: Date.now() + delay, times });
        },
        (err) => logger.error({ err, job_id: job.id }, "job run failed unexpectedly; it runs again"),
      )
      .finally(() => {
        inHand.delete(job.id);
        wake();
      });
    inHand.set(job.id, run);
  }

  /** The set-up, checked before the first look at the queue (and again after a failed check). */
  let checked: Promise<void> | undefined;
  const setUp = () =>
    (checked ??= (async () => {
      checkStarted("createPgBossWorker", boss);
      await queue.ready();
      // A store without its tables would fail every claim, leaving each job to wait in silence.
      await store.ping?.();
    })().catch((err) => {
      checked = undefined;
      throw err;
    }));

  const restore = restoringEvery(() => boss.getDb(), queue.table, [name, queue.deadLetter], logger);

  async function poll(): Promise<void> {
    let readyLogged = false;
    while (!stopping) {
      const free = concurrency - inHand.size;
      if (free <= 0) {
        await Promise.race([...inHand.values(), pause(pollingIntervalMs)]);
        continue;
      }
      const now = Date.now();
      for (const [id, off] of putOff) if (off.until < now - 60_000) putOff.delete(id);
      const skipped = [...inHand.keys(), ...[...putOff].filter(([, off]) => off.until > now).map(([id]) => id)];
      let jobs: ReadyJob[];
      try {
        await setUp();
        checkStarted("createPgBossWorker", boss);
        await restore();
        jobs = (await boss.getDb().executeSql(queue.table.ready, [name, free, skipped])).rows;
        readyLogged = false;
      } catch (err) {
        if (!readyLogged)
          logger.error({ err, queue: name }, "worker cannot take jobs (set-up or database); trying again");
        readyLogged = true;
        await pause(pollingIntervalMs);
        continue;
      }
      for (const job of jobs) start(job);
      if (jobs.length === 0) await pause(pollingIntervalMs);
    }
  }
  const polling = poll();

  return {
    waitUntilReady: setUp,
    ...workerControls({
      store,
      queue,
      concurrency,
      running: () => inHand.size,
      // The poll loop runs until the worker closes: it logs and retries what fails.
      taking: () => !stopping,
      stop: () => {
        stopping = true;
        wake();
        return polling.then(() => Promise.all(inHand.values()));
      },
      shutdown,
      release: async () => void boss.off("error", onBossError),
    }),
  };
}
