import { coded } from "../shared/errors.js";
import { readAnswer } from "../testing/read-answer.js";
import { signStandardWebhook } from "../verify/sign.js";
import type { StandardWebhooksSecret } from "../verify/standard-webhooks-verifier.js";
import type { DeliveryAttempt, DeliveryKind, DeliveryRecord } from "./delivery-log.js";
import type { Random } from "./random.js";

export interface ChaosOptions {
  /** Share of notifications also sent a second time, as a separate delivery. Default 0. */
  duplicateRate?: number;
  /** Hold a notification back by up to this long before its first attempt, so later ones overtake it. Default 0. */
  reorderWindowMs?: number;
  /** Share of notifications held back when `reorderWindowMs` is set. Default 1 (all). */
  reorderRate?: number;
  /** Build the body again for each retry (other key order and whitespace, same JSON value). Default false. */
  reserializeRetries?: boolean;
  /** Wait this long before every attempt, on top of the schedule. Default 0. */
  delayMs?: number;
  /**
   * Share of notifications and events never delivered at all (no attempt is made; the delivery log
   * marks them `dropped`), as a platform that lost them would: what `merchant-webhooks/reconcile`
   * finds. Default 0.
   */
  dropRate?: number;
}

/** Headers for one attempt; `id` is the notification id, the same on every attempt. */
export type DeliverySigner = (body: string, id: string) => Record<string, string> | Promise<Record<string, string>>;

export interface DelivererOptions {
  /** Delay before each attempt, in ms; its length is the number of attempts. */
  retrySchedule: readonly number[];
  /** Multiplies every schedule delay, hold and chaos delay (not the attempt time-out). */
  timeScale: number;
  attemptTimeoutMs: number;
  /** Attempts in flight at once, across all deliveries. */
  concurrency: number;
  chaos: ChaosOptions;
  sign: DeliverySigner | undefined;
  random: Random;
  /** Called after every attempt with the delivery, the attempt and what comes next. */
  onAttempt?: AttemptListener | undefined;
}

/**
 * What follows an attempt: `delivered` (answered processed), `retry` (attempts remain) or `exhausted`
 * (the schedule is used up).
 */
export type AttemptOutcome = "delivered" | "retry" | "exhausted";

/** `delivery.attempts` includes `attempt`, the last one. Called synchronously: do not keep `delivery`. */
export type AttemptListener = (
  delivery: Readonly<DeliveryRecord>,
  attempt: DeliveryAttempt,
  outcome: AttemptOutcome,
) => void;

/** Standard Webhooks headers with the notification id as `webhook-id`, which stays the same across retries. */
export function standardWebhooksDeliverySigner(secret: StandardWebhooksSecret): DeliverySigner {
  return (body, id) => signStandardWebhook(body, secret, { id });
}

export interface DeliveryMeta {
  id: string;
  kind: DeliveryKind;
  event_type: string;
  subscription_id?: string | undefined;
}

/**
 * Delivers like a platform: each payload is POSTed until an answer says `processed: true` with a 2xx
 * status, retrying on any other answer, a time-out or a connection error, on the retry schedule.
 */
export function createDeliverer(options: DelivererOptions) {
  const records: DeliveryRecord[] = [];
  const running = new Set<Promise<void>>();
  const timers = new Set<{ timer: NodeJS.Timeout; resolve: () => void }>();
  const waitingForSlot: (() => void)[] = [];
  let inFlight = 0;
  let firstSentCounter = 0;
  let closed = false;
  const { chaos, random, timeScale } = options;

  function sleep(ms: number): Promise<void> {
    const scaled = ms * timeScale;
    if (scaled <= 0 || closed) return Promise.resolve();
    return new Promise((resolve) => {
      const entry = {
        timer: setTimeout(() => {
          timers.delete(entry);
          resolve();
        }, scaled),
        resolve,
      };
      timers.add(entry);
    });
  }

  async function slot(): Promise<() => void> {
    if (inFlight >= options.concurrency) await new Promise<void>((resolve) => waitingForSlot.push(resolve));
    inFlight++;
    return () => {
      inFlight--;
      waitingForSlot.shift()?.();
    };
  }

  async function attempt(url: string, body: string, id: string): Promise<DeliveryAttempt> {
    const headers: Record<string, string> = {
      "content-type": "application/json",
      ...(options.sign ? await options.sign(body, id) : {}),
    };
    const at = new Date().toISOString();
    const started = performance.now();
    try {
      const signal = AbortSignal.timeout(options.attemptTimeoutMs);
      const response = await fetch(url, { method: "POST", headers, body, redirect: "manual", signal });
      const text = await readAnswer(response);
      const answer = answerOf(text);
      const processed = response.ok && answer?.processed === true;
      return {
        status: response.status,
        processed,
        ms: performance.now() - started,
        message: answer?.message ?? text.slice(0, 200),
        at,
      };
    } catch (err) {
      return { status: 0, processed: false, ms: performance.now() - started, message: failureOf(err), at };
    }
  }

  async function run(record: DeliveryRecord, payload: unknown, holdMs: number): Promise<void> {
    await sleep(holdMs);
    const firstBody = JSON.stringify(payload);
    for (let index = 0; index < options.retrySchedule.length && !closed; index++) {
      await sleep(options.retrySchedule[index]! + (chaos.delayMs ?? 0));
      if (closed) break;
      const body = index > 0 && chaos.reserializeRetries ? reserialize(payload) : firstBody;
      const release = await slot();
      if (record.firstSent === 0) record.firstSent = ++firstSentCounter;
      const result = await attempt(record.url, body, record.id).finally(release);
      record.attempts.push(result);
      const outcome = result.processed ? "delivered" : index + 1 < options.retrySchedule.length ? "retry" : "exhausted";
      options.onAttempt?.(record, result, outcome);
      if (result.processed) {
        record.delivered = true;
        break;
      }
    }
    // Still pending only when closing cut the schedule short.
    record.pending = !record.delivered && closed && record.attempts.length < options.retrySchedule.length;
  }

  function start(url: string, payload: unknown, meta: DeliveryMeta, duplicate: boolean, dropped = false): void {
    const window = chaos.reorderWindowMs ?? 0;
    const held = window > 0 && random() < (chaos.reorderRate ?? 1);
    const record: DeliveryRecord = {
      ...meta,
      ...(meta.subscription_id === undefined ? {} : { subscription_id: meta.subscription_id }),
      url,
      delivered: false,
      pending: true,
      duplicate,
      held,
      firstSent: 0,
      attempts: [],
      ...(dropped ? { dropped, pending: false } : {}),
    };
    records.push(record);
    if (dropped) return;
    const task = run(record, payload, held ? random() * window : 0);
    running.add(task);
    void task.finally(() => running.delete(task));
  }

  return {
    records: records as readonly DeliveryRecord[],

    /** Start delivering `payload` to `url`; with chaos, perhaps twice. */
    send(url: string, payload: unknown, meta: DeliveryMeta): void {
      if (closed) throw coded(new Error("the simulator is closed"), "MW_SIMULATOR_CLOSED");
      // A dropped notification is lost whole: no duplicate of it goes out either.
      // Drawn only with a rate set, so seeded runs without one draw as before.
      if (chaos.dropRate && random() < chaos.dropRate) {
        start(url, payload, meta, false, true);
        return;
      }
      start(url, payload, meta, false);
      if (random() < (chaos.duplicateRate ?? 0)) start(url, payload, meta, true);
    },

    /** Resolves once no delivery has attempts left to make (including ones started meanwhile). */
    async settled(): Promise<void> {
      while (running.size > 0) await Promise.allSettled([...running]);
    },

    /** Stop: no further attempts; deliveries still pending stay pending in the log. */
    async close(): Promise<void> {
      closed = true;
      for (const entry of timers) {
        clearTimeout(entry.timer);
        entry.resolve();
      }
      timers.clear();
      await Promise.allSettled([...running]);
    },
  };
}

function answerOf(text: string): { processed?: unknown; message?: string } | undefined {
  try {
    const value = JSON.parse(text) as { processed?: unknown; message?: unknown } | null;
    if (value && typeof value === "object")
      return { processed: value.processed, message: typeof value.message === "string" ? value.message : "" };
  } catch {
    // Not JSON: a proxy's error page or a framework's 404.
  }
  return undefined;
}

function failureOf(err: unknown): string {
  const name = (err as Error)?.name;
  if (name === "TimeoutError" || name === "AbortError") return "timed out";
  const cause = (err as { cause?: { code?: string } }).cause;
  return cause?.code ?? (err as Error)?.message ?? String(err);
}

export type Deliverer = ReturnType<typeof createDeliverer>;

/**
 * The same JSON value in other bytes: keys in reverse order and indented. A platform that builds the
 * body again for a retry sends this kind of difference, which a receiver must treat as the same payload.
 */
export function reserialize(value: unknown): string {
  return JSON.stringify(reversedKeys(value), null, 2);
}

function reversedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reversedKeys);
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).reverse()) out[key] = reversedKeys((value as Record<string, unknown>)[key]);
  return out;
}
