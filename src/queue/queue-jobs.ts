import type { LanePlace } from "./redrive-order.js";

/**
 * What a durable queue shows and does for the console and its admin API (`merchant-webhooks/console`),
 * whatever the queue is: `bullmqQueue` and `pgBossQueue` each give one as their `jobs`, so the console
 * knows neither BullMQ nor pg-boss. Its dead-letter part (`DeadLetterJobs`) is what every redrive runs on.
 */
export interface QueueJobs extends DeadLetterJobs {
  /** The queue's name for people: `BullMQ`, `pg-boss`. */
  readonly kind: string;
  view(id: string): Promise<JobView | undefined>;
  /**
   * What the jobs of `ids` tell of each (event type, subscription, order key), in one round trip: a
   * list page's lines, without a job view each. Ids without a job are left out.
   */
  about(ids: readonly string[]): Promise<Map<string, JobAbout>>;
  /** The failures the notification was redriven after, oldest first, kept when its job is not. */
  failures(id: string): Promise<JobFailure[]>;
  /**
   * Put a dead letter back to work with its attempts afresh; false when it is not one. `note` is the
   * failure it is redriven after: kept with the job, so its story still tells it once the job completes.
   */
  retryFailed(id: string, note?: JobFailure): Promise<boolean>;
  /** Remove a dead letter (discarded by a person), so no redrive offers it again; false when none was there. */
  removeFailed(id: string): Promise<boolean>;
  /** Notification ids of the dead letters, newest first, from `start`. */
  failed(start: number, count: number): Promise<string[]>;
  counts(): Promise<QueueCounts>;
}

/**
 * The dead letters a redrive puts back (`redriveDeadLetters`), whatever holds them: a queue's failed
 * set or dead-letter queue, or a store's kept notifications (`redrive --in-process`).
 */
export interface DeadLetterJobs {
  /** The dead letters, each with its place in its lane: every one, or those of `ids` (the others left out). */
  deadLetters(ids?: readonly string[]): Promise<DeadLetter[]>;
  /**
   * Put one of `deadLetters`' back to work with its attempts afresh: undefined when it went back, else
   * why not. `after`: the dead letter of its lane put back just before it, which it runs after.
   */
  redrive(letter: DeadLetter, after?: DeadLetter): Promise<string | undefined>;
  /** Whether one put back has settled, waited for before the next of its lane goes back (see `RedriveSteps`). */
  settled?(letter: DeadLetter): Promise<boolean>;
}

/** A dead letter, as a redrive sees it. */
export interface DeadLetter {
  /** Its notification's id. */
  id: string;
  /** Where it stood in its ordered lane, when it has one. */
  order?: LanePlace | undefined;
  /** Why it cannot run again (its data was lost before it ran), when it cannot: replay it, or discard it. */
  unrunnable?: string;
}

export interface QueueCounts {
  waiting: number;
  active: number;
  delayed: number;
  /** Dead letters: BullMQ's failed set, pg-boss's dead-letter queue. */
  failed: number;
  /** How long the oldest waiting job has waited. */
  lagMs?: number;
}

/** What a job tells of its notification in clear, sealed or not (the subscription only when not sealed). */
export interface JobAbout {
  eventType: string;
  subscriptionId?: string;
  order?: { key: string; position?: string };
}

/** What job data tells in clear: its event type, order key and, when not sealed, the subscription. */
export function aboutJobData(data: {
  event_type?: unknown;
  order?: { key: string; position?: string };
  notification?: { resource?: { id?: unknown } };
}): JobAbout | undefined {
  if (typeof data.event_type !== "string") return undefined;
  const about: JobAbout = { eventType: data.event_type };
  const subscription = data.notification?.resource?.id;
  if (typeof subscription === "string") about.subscriptionId = subscription;
  if (data.order) about.order = data.order;
  return about;
}

/** A failure a job was redriven after: when, after how many attempts in all (the record's count), and its reason. */
export interface JobFailure {
  at: number;
  attempts: number;
  reason?: string;
}

/**
 * A notification's job, as the console shows it: never the notification in clear when it is sealed,
 * and never the job's failure text (a handler's error message may quote the payload; the record's
 * failure reason is the one to show).
 */
export interface JobView {
  state: string;
  /** Runs of the handler the job made, those before its last redrive included (as the record counts them). */
  attemptsMade: number;
  /** Epoch ms: added to the queue, last run started, finished (completed or failed for good). */
  queuedAt: number;
  processedAt?: number;
  finishedAt?: number;
  eventType: string;
  /** The job's notification is sealed (`encryptionKey`): the console cannot and does not open it. */
  sealed: boolean;
  order?: { key: string; position?: string };
  headers: Record<string, string>;
  /** The notification as the job keeps it (masked), when not sealed; the caller redacts it further. */
  notification?: unknown;
}

/** Redrive notes as kept (JSON text beside a BullMQ job, objects in a pg-boss job's data): the well-formed ones. */
export function failuresOf(values: readonly unknown[]): JobFailure[] {
  const out: JobFailure[] = [];
  for (const value of values) {
    let note: unknown = value;
    if (typeof value === "string")
      try {
        note = JSON.parse(value);
      } catch {
        continue;
      }
    const { at, attempts, reason } = (note ?? {}) as Partial<JobFailure>;
    if (typeof at !== "number" || typeof attempts !== "number") continue;
    out.push(typeof reason === "string" ? { at, attempts, reason } : { at, attempts });
  }
  return out;
}
