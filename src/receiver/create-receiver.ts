import type { Logger } from "pino";
import { retryInBackground } from "../dispatch/retry-in-background.js";
import { ownerTokens } from "../dispatch/run-claimed.js";
import { drainedLanes, type IdempotencyStore } from "../idempotency/store.js";
import { recordingOf } from "../logging/recorder.js";
import { type CloseOptions, closeTimeoutOf } from "../shared/close-options.js";
import { loadOtelApi, otelApiLoading } from "../telemetry/load-api.js";
import { observeReceive } from "../telemetry/observe-receive.js";
import {
  answerAndLog,
  type EarlyRejection,
  earlyVerdict,
  internalErrorVerdict,
  type ReceiverResponse,
  type Verdict,
} from "./answer-and-log.js";
import { background } from "./background.js";
import { claimAndDispatch, handlerSlots } from "./claim-and-dispatch.js";
import { checkHealth, type HealthOptions, type ReceiverHealth } from "./health.js";
import { type Intake, intake, type ReceiverRequest } from "./intake.js";
import { type ReceiverOptions, type ResolvedOptions, resolveOptions } from "./options.js";
import { keepsNotifications, type LapsedSweep, resumeLapsed } from "./resume-lapsed.js";

export type { EarlyRejection } from "./answer-and-log.js";
export type { ReceiverRequest } from "./intake.js";

export interface Receiver {
  handle(request: ReceiverRequest): Promise<ReceiverResponse>;
  /** The answer for a request an adapter refuses before the core sees its body. */
  reject(reason: EarlyRejection): ReceiverResponse;
  /** The answer (500, logged) for a failure in an adapter or the core: a bug, never bad input. */
  internalError(err: unknown): ReceiverResponse;
  readonly bodyLimit: number;
  /** Time an adapter that reads the stream gives the body before answering `reject("body_timeout")`. */
  readonly bodyTimeoutMs: number;
  /**
   * Waits for background writes (completion records being retried, recordings) at most `timeoutMs`
   * (default 10 s), logging what was abandoned, then closes the queue and the recorder, each given
   * the same limit.
   */
  close(options?: CloseOptions): Promise<void>;
  /** Background work still running after its answer (completion records being retried, recordings). */
  inFlight(): number;
  /** Pings the store and the queue within a short time-out; `ok: false` means notifications would get 503. */
  health(options?: HealthOptions): Promise<ReceiverHealth>;
}

const DEFAULT_CLOSE_TIMEOUT_MS = 10_000;

/** What an adapter tells the core about its framework. */
export interface AdapterHints {
  /**
   * How to turn this framework's body parser off, named in the 500 answer when one consumed the body
   * (Next's Pages Router: its route `config`). Default: mount the webhook before any body parser.
   */
  bodyParserFix?: string;
}

/** adapter → intake → claim and dispatch → answer and log. */
export function createReceiver(options: ReceiverOptions, hints: AdapterHints = {}): Receiver {
  const resolved = resolveOptions(options);
  const { logger, bodyLimit, bodyTimeoutMs } = resolved;
  const work = background(logger);
  const slots = handlerSlots(options.backpressure);
  const answer = answerAndLog(logger, resolved.failureStatus, slots.inFlight);
  const dispatch = claimAndDispatch(resolved, slots, work, (verdict, started) => void answer(verdict, started));
  const rules = {
    bodyLimit,
    bodyTimeoutMs,
    verifies: options.verify !== undefined,
    bodyParserFix: hints.bodyParserFix,
  };
  const verdictOf = (refusal: Verdict | EarlyRejection) =>
    typeof refusal === "string" ? earlyVerdict(refusal, rules) : refusal;
  const intakeRules = {
    bodyLimit,
    verify: options.verify,
    authorizeSender: options.authorizeSender,
    schema: options.eventSchema,
    verifyTimeoutMs: resolved.verifyTimeoutMs,
    explainSignatureFailures: options.explainSignatureFailures === true,
    unavailableHeaders: resolved.unavailableRetry,
    // A recording reads the body after the handler ran: it gets zod's copy as the notification.
    fastAccept: !options.record,
    fingerprint: resolved.fingerprint,
  };
  loadOtelApi();
  const unwatchStore = watchStore(resolved.store, logger);
  // Said once, at start-up: ordered notifications through a durable queue drain from per-subscription
  // lanes only where the store keeps them whole (`DrainedLaneStore`) and the queue can wake a runner (wake).
  // postgresStore and the pg-boss queue do not: each ordered notification keeps its own job, which
  // works and stays in order, at the older, slower drain (docs/ordering.md).
  if (resolved.ordering && options.queue?.durable && !(options.queue.wake && drainedLanes(resolved.store)))
    logger.info(
      // The field keeps its first name: alerts and log queries may look for it.
      { mailbox: false },
      "ordering: each ordered notification runs as its own queued job with this store and queue (no per-subscription lane kept whole; see docs/ordering.md)",
    );

  const lapsed = sweepLapsed(resolved, work, (verdict, started) => void answer(verdict, started));

  async function handle(request: ReceiverRequest): Promise<ReceiverResponse> {
    const started = performance.now();
    const receivedAt = Date.now();
    // Only the first requests wait, while the optional OpenTelemetry API is still being looked for.
    const loading = otelApiLoading();
    if (loading) await loading;
    const observation = observeReceive(request.headers);
    const taken = await intake(request, intakeRules);
    if (taken.accepted) request.onAccepted?.(taken.notification);
    if (taken.accepted && taken.secretIndex) {
      logger.info(
        { notification_id: taken.notification.id, secret_index: taken.secretIndex },
        "signature matched under a rotated (older) secret: the sender still signs with it, so keep it until this stops",
      );
    }
    const response = answer(
      taken.accepted ? await dispatch(taken, observation) : verdictOf(taken.refusal),
      started,
      observation,
    );
    record(taken, response, receivedAt);
    return response;
  }

  function record(taken: Intake, response: ReceiverResponse, receivedAt: number): void {
    if (!options.record || !taken.headers || !taken.body) return;
    const { headers, body } = taken;
    // A recording is a convenience: its failure, in redaction or in the write, is logged and never
    // changes the answer.
    const write = () => options.record!.write(recordingOf(headers, body, response, receivedAt, options.redact ?? {}));
    work.track(
      "recording",
      Promise.resolve()
        .then(write)
        .catch((err) => logger.warn({ err }, "recording failed")),
    );
  }

  return {
    handle,
    reject: (reason) => answer(earlyVerdict(reason, rules), performance.now()),
    internalError: (err) => answer(internalErrorVerdict(err), performance.now()),
    bodyLimit,
    bodyTimeoutMs,
    inFlight: () => work.size() + notRunYet(options.queue),
    health: (healthOptions) =>
      checkHealth(resolved.store, options.queue, healthOptions, slots, {
        lanes: resolved.ordering !== undefined,
        // A durable queue keeps what it accepted by being one: said only of a queue that is not.
        kept: options.queue && !options.queue.durable ? lapsed !== undefined : undefined,
      }),
    async close(limit) {
      const timeoutMs = closeTimeoutOf(limit, DEFAULT_CLOSE_TIMEOUT_MS);
      unwatchStore();
      lapsed?.stop();
      await work.settle(timeoutMs);
      await options.queue?.close?.({ timeoutMs });
      const abandoned = notRunYet(options.queue);
      if (abandoned > 0)
        logger.warn(
          { abandoned_notifications: abandoned, timeout_ms: timeoutMs },
          lapsed
            ? "closed with accepted notifications not run: kept with their records, another receiver on the store runs them once their claims lapse"
            : "closed with accepted notifications not run: the in-process queue is not durable, and they are lost",
        );
      await options.record?.close?.();
    },
  };
}

/** How often a receiver looks for lapsed in-process claims: half a lease, at least a second. */
const sweepEvery = (leaseMs: number) => Math.max(1_000, Math.floor(leaseMs / 2));

/**
 * With an in-process queue: on a store that keeps its notifications, the sweep that runs those whose
 * receiver died (`resumeLapsed`); on one that does not, the warning, once, that they are lost with the
 * process (`warning: "queue_not_durable"`).
 */
function sweepLapsed(
  resolved: ResolvedOptions,
  work: ReturnType<typeof background>,
  logQueued: (verdict: Verdict, started: number) => void,
): LapsedSweep | undefined {
  const { queue } = resolved.options;
  if (!queue || queue.durable) return undefined;
  const { store } = resolved;
  if (!queue.readCarried || !keepsNotifications(store)) {
    resolved.logger.warn(
      { warning: "queue_not_durable" },
      "in-process queue on a store that does not keep its notifications (memoryStore, or redisStore without timeIndex): notifications answered processed: true are lost if this process dies",
    );
    return undefined;
  }
  return resumeLapsed(
    { ...resolved, store },
    queue,
    queue.readCarried,
    {
      nextOwner: ownerTokens(),
      retryCompletion: (write) => work.track("completion record", retryInBackground(write)),
      logQueued,
    },
    sweepEvery(resolved.leaseMs),
  );
}

/**
 * Accepted notifications a queue that is not durable (`inProcessQueue`) holds in this process, running
 * or waiting: lost with it. A durable queue keeps its own elsewhere: none.
 */
function notRunYet(queue: { durable: boolean } | undefined): number {
  if (!queue || queue.durable) return 0;
  const { size } = queue as { size?: unknown };
  return typeof size === "number" ? size : 0;
}

/** How long the start-up check waits for the store's first answer before it stops waiting (silently). */
const START_CHECK_MS = 10_000;

/**
 * Log the store's connection changes through the receiver's logger, and warn once at start when the
 * store is unreachable, rather than leaving it to the first notification's 503. Returns a function
 * that stops both (called by `close`).
 */
function watchStore(store: IdempotencyStore, logger: Logger): () => void {
  const connection = store.connection;
  if (!connection) return () => {};
  const unwatch = connection.watch(logger);
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const gaveUp = new Promise<"waiting">((resolve) => {
    timer = setTimeout(() => resolve("waiting"), START_CHECK_MS);
    timer.unref?.();
  });
  void Promise.race([connection.settled(), gaveUp]).then((state) => {
    clearTimeout(timer);
    if (stopped || state !== "down") return;
    const { error } = connection.state();
    logger.warn(
      { address: connection.address, ...(error ? { err: error } : {}) },
      `idempotency store unreachable at start (${connection.address}): notifications get 503 until it is back`,
    );
  });
  return () => {
    stopped = true;
    clearTimeout(timer);
    unwatch();
  };
}
