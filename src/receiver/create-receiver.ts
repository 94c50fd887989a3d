import type { Logger } from "pino";
import { memoryStore } from "../idempotency/memory-store.js";
import { DEFAULT_LEASE_MS, type IdempotencyStore } from "../idempotency/store.js";
import { defaultLogger, handlerLogger, libraryLogger } from "../logging/logger.js";
import { MAX_NOTIFICATION_ID_LENGTH, subscriptionNotificationSchema, type SubscriptionNotification } from "../schema/index.js";
import { shownText } from "../logging/shown-text.js";
import { respond, responsesByOutcome, retryAfter, type Answer, type ReceiverResponse } from "../answer/answer.js";
import { isAcceptableContentType } from "./content-type.js";
import { fingerprintOf } from "./fingerprint.js";
import { handlerFor } from "../dispatch/handlers.js";
import { handlerContext } from "../dispatch/handler-context.js";
import { normalizeHeaders, type HeaderSource } from "./headers.js";
import { DEFAULT_BODY_LIMIT, DEFAULT_HANDLER_TIMEOUT_MS, type ReceiverOptions } from "./options.js";
import { OUTCOMES, type Outcome } from "../answer/outcomes.js";
import { parseJsonObject } from "./parse-json.js";
import { MAX_BODY_DEPTH, TOO_DEEP_MESSAGE, valueNestsDeeperThan } from "./nesting-depth.js";
import { recordingOf } from "../recording/recorder.js";
import { HandlerTimeoutError, runHandler } from "../dispatch/run-handler.js";
import { retryInBackground } from "../dispatch/retry-in-background.js";
import { QueueFullError } from "../queue/queue-full-error.js";
import { holdClaimWhileQueued } from "../queue/hold-claim.js";
import { handlerSlots } from "../dispatch/handler-slots.js";
import { validationMessage } from "./validation-message.js";

/** The framework-neutral request an adapter builds. */
export interface ReceiverRequest {
  method: string;
  headers: HeaderSource;
  /** The exact bytes received. */
  rawBody?: Uint8Array;
  /**
   * A body an earlier middleware already parsed, when the raw bytes are gone. Accepted for unsigned
   * notifications only: a signature cannot be checked against a re-serialization.
   */
  parsedBody?: unknown;
}

/** Answers an adapter needs before the core can see a body. */
export type EarlyRejection = "too_large" | "body_consumed" | "unreadable";

export interface Receiver {
  handle(request: ReceiverRequest): Promise<ReceiverResponse>;
  reject(reason: EarlyRejection): ReceiverResponse;
  readonly bodyLimit: number;
  /** Waits for background writes (completion records being retried) and closes the queue. */
  close(): Promise<void>;
}

/** Fields of the one log line written per notification. */
interface LogFields {
  notification_id?: string;
  event_type?: string;
  merchant_id?: string;
  subscription_id?: string;
  attempt?: number;
  reason?: string;
  err?: unknown;
}

export function createReceiver(options: ReceiverOptions): Receiver {
  const store: IdempotencyStore = options.idempotency ?? memoryStore();
  const logger: Logger = libraryLogger(options.logger ?? defaultLogger(), options.redact ?? {});
  const ctxLogger = handlerLogger(logger, options.redact ?? {});
  const failureStatus = options.failureStatus ?? "semantic";
  const bodyLimit = options.bodyLimit ?? DEFAULT_BODY_LIMIT;
  const timeoutMs = options.handlerTimeoutMs ?? DEFAULT_HANDLER_TIMEOUT_MS;
  const leaseMs = options.leaseMs ?? store.leaseMs ?? DEFAULT_LEASE_MS;
  const unavailableRetry = retryAfter((options.retryAfterSeconds ?? 5) * 1000);
  const background = new Set<Promise<unknown>>();
  const slots = options.backpressure ? handlerSlots(options.backpressure) : undefined;
  // Owner tokens: unique per attempt without a random draw per notification.
  const instance = crypto.randomUUID();
  let sequence = 0;

  const fixedResponses = responsesByOutcome(failureStatus);

  function finish(
    outcome: Outcome,
    started: number,
    fields: LogFields,
    extra?: { message?: string; headers?: Record<string, string> },
  ): ReceiverResponse {
    const row = OUTCOMES[outcome];
    const response = extra
      ? respond(row.status, { processed: row.processed, message: extra.message ?? row.message }, failureStatus, extra.headers)
      : fixedResponses[outcome];
    const line: LogFields & { outcome: Outcome; status: number; duration_ms: number } = Object.assign(fields, {
      outcome,
      status: response.status,
      duration_ms: Math.round((performance.now() - started) * 1000) / 1000,
    });
    if (row.status >= 500) logger.error(line, "notification not processed");
    else if (row.status >= 400) logger.warn(line, "notification rejected");
    else logger.info(line, "notification handled");
    return response;
  }

  async function claimAndRun(
    notification: SubscriptionNotification,
    body: Record<string, unknown>,
    headers: Record<string, string>,
    started: number,
  ): Promise<ReceiverResponse> {
    const id = notification.id;
    const fields: LogFields = {
      notification_id: id,
      event_type: notification.event_type,
      merchant_id: notification.resource.merchant_id,
      subscription_id: notification.resource.id,
    };
    const fingerprint = await fingerprintOf(body);
    const owner = `${instance}:${++sequence}`;

    let claim;
    try {
      claim = await store.claim({ id, fingerprint, owner, leaseMs });
    } catch (err) {
      return finish("unavailable", started, { ...fields, reason: "idempotency store unavailable", err }, {
        message: "idempotency store unavailable; retry later",
        headers: unavailableRetry,
      });
    }
    switch (claim.status) {
      case "completed":
        return finish("duplicate", started, fields);
      case "queued":
        return finish("duplicate", started, { ...fields, reason: "already queued" });
      case "conflict":
        return finish("conflict", started, fields);
      case "processing":
        return finish("in_progress", started, fields, { headers: retryAfter(claim.retryAfterMs) });
    }
    fields.attempt = claim.attempt;

    const receivedAt = Date.now();
    const process = () => processClaimed(notification, id, owner, claim.attempt, headers, receivedAt);

    if (options.queue) {
      try {
        const run = async () => void (await process());
        await options.queue.enqueue({
          id,
          fingerprint,
          notification,
          headers,
          receivedAt,
          run: options.queue.durable
            ? run
            : holdClaimWhileQueued({ store, id, owner, leaseMs }, run, () =>
                logger.warn({ ...fields, outcome: "lost_claim" }, "claim taken over while queued; the other delivery runs it"),
              ),
        });
        if (options.queue.durable) await store.markQueued(id, owner);
      } catch (err) {
        await Promise.resolve(store.release(id, owner)).catch(() => {});
        if (err instanceof QueueFullError) return finish("overloaded", started, { ...fields, reason: err.message }, { headers: unavailableRetry });
        return finish("unavailable", started, { ...fields, reason: "queue unavailable", err }, {
          message: "queue unavailable; retry later",
          headers: unavailableRetry,
        });
      }
      return finish("queued", started, fields);
    }

    const result = slots ? await slots.run(process) : await process();
    return finish(result.outcome, started, { ...fields, ...result.fields });
  }

  /** Run the handler for a claimed notification and record the outcome under `owner`. */
  async function processClaimed(
    notification: SubscriptionNotification,
    id: string,
    owner: string,
    attempt: number,
    headers: Record<string, string>,
    receivedAt: number,
  ): Promise<{ outcome: Outcome; fields?: LogFields }> {
    const handler = handlerFor(options, notification.event_type);
    let outcome: Outcome = "unhandled";
    if (handler) {
      try {
        await runHandler(handler, notification, (signal) => handlerContext({ notification, attempt, headers, receivedAt, signal, baseLogger: ctxLogger }), {
          timeoutMs,
          leaseMs,
          extendLease: async () => store.extend(id, owner, leaseMs),
        });
        outcome = "processed";
      } catch (err) {
        const timedOut = err instanceof HandlerTimeoutError;
        const failed: Outcome = timedOut ? "handler_timeout" : "handler_failed";
        // A failed record is taken over by the next delivery; if this write fails, the lease expiring does the same.
        await Promise.resolve(store.fail(id, owner, failed)).catch(() => {});
        return { outcome: failed, fields: { err } };
      }
    }
    const row = OUTCOMES[outcome];
    const answer: Answer = { processed: true, message: row.message };
    try {
      await store.complete(id, owner, answer);
    } catch {
      // The handler's effect happened: answer processed and keep trying to record it. While the lease
      // lives a redelivery meets 409; an outage longer than the lease leaves a window (see README).
      track(retryInBackground(() => store.complete(id, owner, answer)));
    }
    return { outcome };
  }

  function track(task: Promise<unknown>): void {
    background.add(task);
    task.finally(() => background.delete(task)).catch(() => {});
  }

  /** Parsed body and headers of the request being handled, for the recorder. */
  interface Seen {
    headers?: Record<string, string>;
    body?: Record<string, unknown>;
  }

  async function handle(request: ReceiverRequest): Promise<ReceiverResponse> {
    if (!options.record) return respondTo(request, {});
    const receivedAt = Date.now();
    const seen: Seen = {};
    const response = await respondTo(request, seen);
    if (seen.headers && seen.body) {
      const { headers, body } = seen;
      // A recording is a convenience: its failure, in redaction or in the write, is logged and never
      // changes the answer.
      const write = () => options.record!.write(recordingOf(headers, body, response, receivedAt, options.redact ?? {}));
      track(Promise.resolve().then(write).catch((err) => logger.warn({ err }, "recording failed")));
    }
    return response;
  }

  async function respondTo(request: ReceiverRequest, seen: Seen): Promise<ReceiverResponse> {
    const started = performance.now();
    if (request.method !== "POST") {
      return finish("method_not_allowed", started, { reason: request.method }, { headers: { allow: "POST" } });
    }
    const bytes = request.rawBody;
    if (bytes && bytes.byteLength > bodyLimit) return reject("too_large", started);

    const headers = normalizeHeaders(request.headers);
    seen.headers = headers;
    if (!isAcceptableContentType(headers["content-type"])) {
      return finish("unsupported_media_type", started, { reason: headers["content-type"] });
    }

    let body: Record<string, unknown>;
    if (bytes) {
      if (options.verify && !(await passesVerify(bytes, headers))) return finish("unauthorized", started, {});
      const parsed = parseJsonObject(bytes);
      if (!parsed.ok) return finish("invalid", started, { reason: parsed.message }, { message: parsed.message });
      body = parsed.value;
    } else {
      if (options.verify || request.parsedBody === undefined) return reject("body_consumed", started);
      const parsed = request.parsedBody;
      if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
        return finish("invalid", started, { reason: "body must be a JSON object" }, { message: "body must be a JSON object" });
      }
      if (valueNestsDeeperThan(parsed, MAX_BODY_DEPTH)) return finish("invalid", started, { reason: TOO_DEEP_MESSAGE }, { message: TOO_DEEP_MESSAGE });
      body = parsed as Record<string, unknown>;
    }
    seen.body = body;

    // Shed load before claiming, so a refused notification leaves no record behind.
    if (slots?.full()) return finish("overloaded", started, { reason: "backpressure" }, { headers: unavailableRetry });

    const result = subscriptionNotificationSchema.safeParse(body);
    if (!result.success) {
      const message = validationMessage(result.error.issues);
      // The id failed validation too, perhaps for its length: never logged whole.
      const id = typeof body.id === "string" ? shownText(body.id, MAX_NOTIFICATION_ID_LENGTH) : undefined;
      return finish("invalid", started, { notification_id: id, reason: message }, { message });
    }
    return claimAndRun(result.data, body, headers, started);
  }

  async function passesVerify(bytes: Uint8Array, headers: Record<string, string>): Promise<boolean> {
    try {
      return (await options.verify!(bytes, headers)) === true;
    } catch {
      return false;
    }
  }

  function reject(reason: EarlyRejection, started = performance.now()): ReceiverResponse {
    switch (reason) {
      case "too_large":
        return finish("too_large", started, {}, { message: `body exceeds the limit of ${bodyLimit} bytes` });
      case "unreadable":
        return finish("invalid", started, { reason: "request body could not be read" }, { message: "request body could not be read" });
      case "body_consumed":
        return finish("misconfigured", started, { reason: "body already parsed" }, {
          message: options.verify
            ? "receiver misconfigured: a body parser consumed the raw body, so the signature cannot be checked; mount the webhook before any body parser"
            : "receiver misconfigured: the request body was consumed before the webhook could read it",
        });
    }
  }

  return {
    handle,
    reject: (reason) => reject(reason),
    bodyLimit,
    async close() {
      await Promise.allSettled([...background]);
      await options.queue?.close?.();
      await options.record?.close?.();
    },
  };
}
