import PQueue from "p-queue";
import { type CloseOptions, closeTimeoutOf } from "../shared/close-options.js";
import { optionError } from "../shared/errors.js";
import { type KnownKeys, rejectUnknownKeys } from "../shared/option-keys.js";
import { settlesWithin } from "../shared/time-limit.js";
import type { NotificationQueue, QueuedNotification } from "./queue.js";
import { QueueFullError } from "./queue-full-error.js";

/** The longest delay `setTimeout` takes (about 24.8 days). */
const MAX_TIMER_MS = 2 ** 31 - 1;

export interface InProcessQueueOptions {
  /** Handlers running at once. Default 10. */
  concurrency?: number;
  /** Notifications waiting beyond those running; past it the receiver answers 503. Default 1,000. */
  maxPending?: number;
  /** How long `close()` waits for accepted notifications to finish. Default 30 s. */
  drainTimeoutMs?: number;
  /**
   * With a durable store (`redisStore`, `postgresStore`), each accepted notification is kept with its
   * record until it completes, so another receiver runs it if this process dies: sealed with this key
   * (AES-256-GCM; 32 bytes, or a string of them in base64 or hex, as `bullmqQueue`'s), or without it
   * with card numbers masked. Card verification data is never kept.
   */
  encryptionKey?: Uint8Array | string;
}

const QUEUE_KEYS: KnownKeys<InProcessQueueOptions> = {
  concurrency: true,
  maxPending: true,
  drainTimeoutMs: true,
  encryptionKey: true,
};

/** How the queue makes and reads the data a durable store keeps with each claim: job-data.ts's, sealed or masked. */
export type JobKeeping = Required<Pick<NotificationQueue, "carry" | "readCarried">>;

export interface InProcessQueue extends NotificationQueue {
  /** Waiting and running notifications. */
  readonly size: number;
  readonly running: number;
  /**
   * Stop accepting (new notifications get 503), then wait for accepted ones at most `timeoutMs`
   * (default: `drainTimeoutMs`).
   */
  close(options?: CloseOptions): Promise<void>;
}

/**
 * Acknowledge after accepting into memory, then run handlers with bounded concurrency. Not a durable
 * queue: on a store that keeps notifications (`IdempotencyStore.kept`: `redisStore`, `postgresStore`)
 * the receiver keeps each one's data with its claim (`keeping`), and a receiver on the same store runs
 * it if this process dies; on `memoryStore`, notifications accepted but not yet handled are lost with
 * the process, and the sender will not resend them because it was told `processed: true`.
 *
 * The claim stays with the receiver (its lease is extended while the handler runs), so a duplicate
 * delivered meanwhile is answered 409 and the handler still runs once.
 */
export function queueInMemory(options: InProcessQueueOptions = {}, keeping?: JobKeeping): InProcessQueue {
  rejectUnknownKeys("inProcessQueue", options, Object.keys(QUEUE_KEYS));
  const maxPending = options.maxPending ?? 1_000;
  const concurrency = options.concurrency ?? 10;
  // p-queue's own refusal of a bad concurrency is an uncoded TypeError; maxPending below 0 would refuse everything.
  if (!(concurrency === Number.POSITIVE_INFINITY || (Number.isInteger(concurrency) && concurrency >= 1)))
    throw optionError(
      new RangeError(`inProcessQueue: concurrency must be a whole number, 1 or more; got ${concurrency}`),
      "MW_INVALID_OPTION",
      "concurrency",
    );
  if (!(Number.isInteger(maxPending) && maxPending >= 0))
    throw optionError(
      new RangeError(`inProcessQueue: maxPending must be a whole number, 0 or more; got ${maxPending}`),
      "MW_INVALID_OPTION",
      "maxPending",
    );
  const queue = new PQueue({ concurrency });
  let closing = false;
  /** Notifications whose handler asked to be retried later, waiting for their time outside the slots. */
  const waitingToRunAgain = new Set<Promise<void>>();

  const runNow = (item: QueuedNotification) => {
    // `run` records failures itself; the catch only keeps a rejection from going unhandled.
    void queue
      .add(() => item.run())
      .then((again) => again && runLater(item, again.runAgainInMs))
      .catch(() => {});
  };
  const runLater = (item: QueuedNotification, ms: number) => {
    const waiting = new Promise<void>((resolve) => {
      // Past the largest delay a timer takes, it would fire at once; the longest wait is kept instead.
      // Unref'd: a process with nothing else to do is not kept up by a retry (the queue is not durable),
      // and `close` waits for it within its limit.
      setTimeout(() => resolve(), Math.min(Math.max(0, ms), MAX_TIMER_MS)).unref?.();
    }).then(() => {
      waitingToRunAgain.delete(waiting);
      runNow(item);
    });
    waitingToRunAgain.add(waiting);
  };
  /** Idle: nothing running, waiting for a slot, or waiting to run again. */
  const idle = async () => {
    do {
      await Promise.all([queue.onIdle(), ...waitingToRunAgain]);
    } while (queue.size + queue.pending + waitingToRunAgain.size > 0);
  };

  return {
    durable: false,
    ...keeping,
    get size() {
      return queue.size + queue.pending + waitingToRunAgain.size;
    },
    get running() {
      return queue.pending;
    },
    async enqueue(item: QueuedNotification) {
      if (closing || queue.size >= maxPending) throw new QueueFullError(maxPending);
      runNow(item);
    },
    async ping() {
      // Full or closing, it refuses notifications (503) until it drains: not a place to route them to.
      if (closing || queue.size >= maxPending) throw new QueueFullError(maxPending);
    },
    async close(closeOptions) {
      closing = true;
      const limit = closeTimeoutOf(closeOptions, options.drainTimeoutMs ?? 30_000);
      await settlesWithin(idle(), limit);
    },
  };
}
