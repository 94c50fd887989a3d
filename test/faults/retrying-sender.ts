import { type Delivery, deliver } from "../redis/fixtures/deliver.js";
import { sleep } from "../support/redis.js";
import { reserialise } from "../support/reserialise.js";

/**
 * How an attempt ended: the HTTP status; no answer (connection refused or reset, body cut off); or no
 * answer within `ANSWER_TIMEOUT_MS`, which a receiver never needs (its store calls are bounded at 500 ms).
 */
export type AnswerKind = `${number}` | "connection error" | "no answer in time";

const ANSWER_TIMEOUT_MS = 10_000;

class NoAnswerInTime extends Error {}

/** `deliver`, bounded: a hung receiver shows up in the tally rather than stalling the sender. */
async function deliverWithin(url: string, notification: unknown): Promise<Delivery> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new NoAnswerInTime()), ANSWER_TIMEOUT_MS);
  });
  try {
    return await Promise.race([deliver(url, notification), late]);
  } finally {
    clearTimeout(timer);
  }
}

export interface SenderOptions {
  notifications: ReadonlyArray<{ id: string }>;
  /** Deliveries in flight at once. */
  concurrency: number;
  /** The URL of a receiver to send to, drawn per attempt (the set changes as receivers die and come back). */
  route: () => string;
  /** What the suite is doing to the system right now; each answer is counted under it too. */
  phase: () => string;
  /** `performance.now()` after which the sender stops retrying and reports what it has. */
  giveUpAt: number;
  /** The longest pause before a retry: the platform honours Retry-After, a test cannot wait 5 s. */
  maxPauseMs?: number;
  /** Send each retry re-serialised (other key order and spacing, the same JSON value), as some platforms do. */
  reserialiseRetries?: boolean;
  /** Called with each answer as it arrives and `performance.now()` then, to time a fault's effect. */
  onAnswer?: (kind: AnswerKind, at: number) => void;
}

export interface SenderReport {
  deliveries: number;
  answers: Partial<Record<AnswerKind, number>>;
  answersByPhase: Record<string, Partial<Record<AnswerKind, number>>>;
  /** Ids answered `processed: true`. */
  acknowledged: Set<string>;
  /** The `processed: true` answers by message ("processed", "already processed", ...). */
  acknowledgedAs: Record<string, number>;
  /** Answers whose status and `processed` disagree (a 200 with processed false, or the reverse). */
  inconsistent: string[];
  /** Ids sent more than once: refused, unanswered or cut off at least once before their acknowledgement. */
  retried: Set<string>;
  /** When (`Date.now()`) each id's acknowledgement came back. */
  acceptedAt: Map<string, number>;
}

export interface Sender {
  /** Resolves once `count` notifications are acknowledged, or the sender has finished. */
  reached(count: number): Promise<void>;
  /** Stop retrying (something else failed); `done` then resolves with what was acknowledged. */
  stop(): void;
  readonly done: Promise<SenderReport>;
}

/**
 * The payment platform's side: each notification is sent until it is answered `processed: true`.
 * Every other answer, and every failed connection, means "send it again" after a short pause.
 */
export function startSender(options: SenderOptions): Sender {
  const maxPauseMs = options.maxPauseMs ?? 200;
  const report: SenderReport = {
    deliveries: 0,
    answers: {},
    answersByPhase: {},
    acknowledged: new Set(),
    acknowledgedAs: {},
    inconsistent: [],
    retried: new Set(),
    acceptedAt: new Map(),
  };
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  let finished = false;
  let stopped = false;

  const count = (kind: AnswerKind, phase: string) => {
    options.onAnswer?.(kind, performance.now());
    report.answers[kind] = (report.answers[kind] ?? 0) + 1;
    const byPhase = (report.answersByPhase[phase] ??= {});
    byPhase[kind] = (byPhase[kind] ?? 0) + 1;
  };
  const wake = () => {
    for (const waiter of [...waiters]) {
      if (finished || report.acknowledged.size >= waiter.count) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    }
  };

  /** Deliver one notification until it is acknowledged (or the sender gives up). */
  async function sendUntilProcessed(notification: { id: string }): Promise<void> {
    for (let attempt = 0; !stopped && performance.now() < options.giveUpAt; attempt++) {
      const phase = options.phase();
      report.deliveries++;
      if (attempt > 0) report.retried.add(notification.id);
      // A refused or reset connection is retried soon: another receiver may be up.
      let pauseMs = 50;
      try {
        const body = options.reserialiseRetries && attempt > 0 ? reserialise(notification, attempt) : notification;
        const answer = await deliverWithin(options.route(), body);
        count(`${answer.status}`, phase);
        if ((answer.status === 200) !== answer.body.processed)
          report.inconsistent.push(`${answer.status} ${JSON.stringify(answer.body)}`);
        if (answer.body.processed) {
          report.acknowledged.add(notification.id);
          report.acceptedAt.set(notification.id, Date.now());
          report.acknowledgedAs[answer.body.message] = (report.acknowledgedAs[answer.body.message] ?? 0) + 1;
          wake();
          return;
        }
        const retryAfterMs = Number(answer.retryAfter) * 1000;
        if (retryAfterMs > 0) pauseMs = Math.min(retryAfterMs, maxPauseMs);
      } catch (err) {
        count(err instanceof NoAnswerInTime ? "no answer in time" : "connection error", phase);
      }
      await sleep(pauseMs);
    }
  }

  let next = 0;
  const lane = async () => {
    while (next < options.notifications.length) await sendUntilProcessed(options.notifications[next++]!);
  };
  const done = Promise.all(Array.from({ length: options.concurrency }, lane)).then(() => {
    finished = true;
    wake();
    return report;
  });

  return {
    reached(target) {
      if (finished || report.acknowledged.size >= target) return Promise.resolve();
      return new Promise<void>((resolve) => waiters.push({ count: target, resolve }));
    },
    stop: () => void (stopped = true),
    done,
  };
}
