import { randomUUID } from "node:crypto";
import { listedText, subscriptionOfKey } from "../idempotency/listed-as.js";
import { isBefore } from "../idempotency/position.js";
import {
  DEFAULT_LEASE_MS,
  type IdempotencyRecord,
  type IdempotencyStore,
  type ListedRecord,
  type ListQuery,
  listCursor,
  MAX_LIST_LIMIT,
  type OrderClaim,
  type RecordState,
} from "../idempotency/store.js";
import { keptHeaders } from "../logging/kept-headers.js";
import type { RecordedNotification } from "../logging/recorder.js";
import { redactCardNumbers, redactNotification } from "../logging/redact.js";
import type { NotificationQueue } from "../queue/queue.js";
import type { DeadLetterJobs, JobFailure, JobView } from "../queue/queue-jobs.js";
import { redriveInOrder } from "../queue/redrive-order.js";
import type { SubscriptionNotification } from "../schema/index.js";
import { coded, MerchantWebhooksError, optionError } from "../shared/errors.js";
import { type KnownKeys, rejectUnknownKeys } from "../shared/option-keys.js";
import { jsonlRecordings } from "./jsonl-recordings.js";
import type { RecordingSource } from "./recordings.js";

export interface AdminOptions {
  /** The store the receivers and workers claim in. */
  idempotency: IdempotencyStore;
  /**
   * The receiver's durable queue (`bullmqQueue` or `pgBossQueue`): redrive and replay hand
   * notifications to it, and its jobs, dead letters and counts are shown. Without one the console only reads.
   */
  queue?: NotificationQueue;
  /**
   * Where recorded requests are read back: `memoryRecordings`, `jsonlRecordings`, any `find(id)`, or
   * the receiver's `jsonlRecorder` itself (read back from its directory).
   */
  recorder?: RecordingSource | { readonly dir: string; write(entry: RecordedNotification): unknown };
}

const ADMIN_KEYS: KnownKeys<AdminOptions> = { idempotency: true, queue: true, recorder: true };

/** The recordings `recorder` gives: itself when it can find one, its directory's when it is a `jsonlRecorder`. */
function recordingSourceOf(recorder: AdminOptions["recorder"]): RecordingSource | undefined {
  if (recorder === undefined) return undefined;
  if (typeof (recorder as Partial<RecordingSource>).find === "function") return recorder as RecordingSource;
  const { dir } = recorder as { dir?: unknown };
  if (typeof dir === "string" && dir !== "") return jsonlRecordings({ dir });
  throw optionError(
    new TypeError(
      "createAdmin: recorder must read recordings back: memoryRecordings(), jsonlRecordings({ dir }), a jsonlRecorder, or an object with find(id)",
    ),
    "MW_INVALID_OPTION",
    "recorder",
  );
}

/** `listNotifications`' filters. Times are epoch ms (or ISO strings) of the record's last change. */
export interface NotificationFilter {
  state?: RecordState;
  eventType?: string;
  /** The subscription's id (`resource.id`), or the order key its records were claimed under. */
  subscriptionId?: string;
  since?: number | string;
  until?: number | string;
}

export interface NotificationListOptions extends NotificationFilter {
  cursor?: string;
  /** Notifications per page. Default 50, at most 1,000. */
  limit?: number;
}

/** One line of the list. */
export interface NotificationSummary {
  id: string;
  state: RecordState;
  eventType?: string;
  subscriptionId?: string;
  /** The order key it was claimed under (with `ordering`), and its position there. */
  orderKey?: string;
  position?: string;
  attempts: number;
  /** The stored answer's message when completed, the failure reason when failed. */
  outcome?: string;
  updatedAt: number;
}

export interface NotificationPage {
  items: NotificationSummary[];
  cursor?: string;
}

export interface TimelineEvent {
  at: number;
  what: "received" | "claimed" | "queued" | "attempt" | "completed" | "failed" | "processing";
  detail?: string;
}

/** A notification's whole story, redacted: nothing here holds card data, a secret or a credential. */
export interface NotificationDetail {
  id: string;
  record?: {
    state: RecordState;
    attempts: number;
    outcome?: string;
    answer?: { processed: boolean; message: string };
    leaseUntil?: number;
    updatedAt?: number;
  };
  eventType?: string;
  subscriptionId?: string;
  /** Its order key's state: the newest completed position, the key's records waiting and stale. */
  ordering?: OrderingState;
  job?: JobView;
  recording?: RecordedNotification;
  timeline: TimelineEvent[];
}

export interface OrderingState {
  key: string;
  position?: string;
  newestCompleted?: string;
  /** Handed to the queue, waiting for their turn, oldest position first. */
  waiting: string[];
  /** Completed as stale (older than a notification already completed). */
  stale: string[];
  /**
   * The dead letter holding this key's lane (`ordering.onDeadLetter: "hold"`): nothing behind it runs
   * until it is redriven (it runs first) or discarded.
   */
  heldBy?: string;
  /**
   * A dead letter older than a notification of its key completed since: redriven, it is stale (it goes
   * to `onStale`, not its handler). The newer completed position.
   */
  staleIfRedriven?: string;
}

export type RedriveRequest = { ids: readonly string[] } | { filter: NotificationFilter; dryRun?: boolean };

export interface AdminRedriveResult {
  /** Notifications the ids or the filter named. */
  matched: number;
  /** Of those, handed back to the queue (0 on a dry run). */
  redriven: number;
  /** The ids redriven (on a dry run: the ids that would be considered), in the order they were. */
  ids: string[];
  /** Those not redriven, each with why. */
  skipped: Array<{ id: string; reason: string }>;
  /**
   * On a dry run: those that would be stale if redriven (older than a notification of their
   * subscription completed since), so the confirmation can say so before the redrive.
   */
  staleIfRedriven?: string[];
}

export interface AdminReplayResult {
  /** `queued`: handed to the queue; `completed`: already processed, nothing ran; `busy`: being processed now. */
  status: "queued" | "completed" | "busy";
  message: string;
}

export interface Admin {
  listNotifications(options?: NotificationListOptions): Promise<NotificationPage>;
  getNotification(id: string): Promise<NotificationDetail | undefined>;
  redrive(request: RedriveRequest): Promise<AdminRedriveResult>;
  replay(id: string): Promise<AdminReplayResult>;
  discard(id: string, options: { reason: string }): Promise<{ discarded: boolean; message: string }>;
  overview(options?: { sample?: number }): Promise<Overview>;
  /** The dead letter holding a subscription's lane (`ordering.onDeadLetter: "hold"`), by order key, if one does. */
  heldBy(orderKey: string): Promise<string | undefined>;
  /** Whether redrive, replay and discard can act (a durable queue is configured). */
  readonly canAct: boolean;
}

export interface Overview {
  /** How many of the most recently changed records were counted (at most `sample`). */
  counted: number;
  byState: Record<string, number>;
  byEventType: Record<string, number>;
  /** Failed records among those counted, newest first (up to 20). */
  deadLetters: NotificationSummary[];
  queue?: { kind: string; waiting: number; active: number; delayed: number; failed: number; lagMs?: number };
}

/** An admin action the console cannot take; `code` says why. */
export class AdminError extends MerchantWebhooksError {
  override name = "AdminError";
  declare readonly code: "MW_ADMIN_NO_QUEUE" | "MW_ADMIN_NOT_FOUND" | "MW_ADMIN_NO_LIST" | "MW_ADMIN_BAD_FILTER";
  constructor(message: string, code: AdminError["code"]) {
    super(code, message);
  }
}

const STATES: readonly RecordState[] = ["processing", "queued", "completed", "failed"];
const DISCARDED = "discarded by hand: ";
/** How often a redrive in order looks whether the notification before has settled. */
const SETTLE_POLL_MS = 50;
/** Most records a redrive by filter or the overview reads. */
const MAX_SCAN = 100_000;

/**
 * The console's admin API, usable from scripts, the CLI and the page: find notifications by state,
 * event type, subscription and time; see one's whole story; and act on dead letters (redrive, replay,
 * discard) through the same claim and queue a delivery goes through, so nothing runs twice.
 */
export function createAdmin(options: AdminOptions): Admin {
  return adminParts(options).admin;
}

/**
 * `createAdmin`'s admin, and its redrive of one dead letter (with the wait for one to settle), for a
 * redrive that lists its dead letters itself: the CLI's `redrive --in-process` (`redriveDeadLetters`).
 */
export function adminParts(options: AdminOptions): {
  admin: Admin;
  redrive: Pick<DeadLetterJobs, "redrive" | "settled">;
} {
  rejectUnknownKeys("createAdmin", options, Object.keys(ADMIN_KEYS));
  const store = options?.idempotency;
  if (!store || typeof store.claim !== "function" || typeof store.get !== "function")
    throw optionError(
      new TypeError("createAdmin: idempotency must be the store the receivers use (memoryStore, redisStore, ...)"),
      "MW_INVALID_OPTION",
      "idempotency",
    );
  const queue = options.queue;
  const jobs = queue?.jobs;
  const recorder = recordingSourceOf(options.recorder);
  const leaseMs = store.leaseMs ?? DEFAULT_LEASE_MS;

  /** The event type and subscription a notification's job or recording tells, redacted on the way. */
  async function about(id: string, order: OrderClaim | undefined) {
    const [job, recording] = await Promise.all([
      jobs?.view(id).catch(() => undefined),
      Promise.resolve(recorder?.find(id)).catch(() => undefined),
    ]);
    const notification = (recording?.notification ?? job?.notification) as SubscriptionNotification | undefined;
    const eventType = job?.eventType ?? (notification?.event_type as string | undefined);
    const key = order?.key ?? job?.order?.key;
    const subscriptionId = (notification?.resource?.id as string | undefined) ?? subscriptionOfKey(key) ?? key;
    return { job, recording, eventType, subscriptionId };
  }

  /**
   * `about` for a list row: the recording's summary from its source's index (`summary`), never the
   * recording itself; a source without `summary` is read with `find`.
   */
  async function aboutRow(id: string, order: OrderClaim | undefined) {
    if (!recorder?.summary) return about(id, order);
    const [job, recorded] = await Promise.all([
      jobs?.view(id).catch(() => undefined),
      Promise.resolve(recorder.summary(id)).catch(() => undefined),
    ]);
    const eventType = job?.eventType ?? recorded?.eventType;
    const key = order?.key ?? job?.order?.key;
    const subscriptionId =
      ((job?.notification as SubscriptionNotification | undefined)?.resource?.id as string | undefined) ??
      recorded?.subscriptionId ??
      subscriptionOfKey(key) ??
      key;
    return { eventType, subscriptionId };
  }

  /**
   * A list page's lines: the event type and subscription the record keeps (`ListedAs`), or else what
   * its job tells, read for the page in one call to the queue; the recording read only for a record
   * neither tells.
   */
  async function summariesOf(items: readonly ListedRecord[]): Promise<NotificationSummary[]> {
    const untold = items.filter((item) => item.eventType === undefined || item.subscriptionId === undefined);
    const told =
      untold.length === 0
        ? new Map()
        : ((await jobs?.about(untold.map((item) => item.id)).catch(() => undefined)) ?? new Map());
    return Promise.all(
      items.map(async (item) => {
        if (item.eventType !== undefined && item.subscriptionId !== undefined)
          return summaryOf(item, item.eventType, item.subscriptionId);
        const job = told.get(item.id);
        if (job?.subscriptionId !== undefined || (job && !recorder)) {
          const key = item.order?.key ?? job.order?.key;
          return summaryOf(
            item,
            item.eventType ?? job.eventType,
            item.subscriptionId ?? job.subscriptionId ?? subscriptionOfKey(key) ?? key,
          );
        }
        const known = await aboutRow(item.id, item.order);
        return summaryOf(
          item,
          item.eventType ?? known.eventType ?? job?.eventType,
          item.subscriptionId ?? known.subscriptionId,
        );
      }),
    );
  }

  function summaryOf(
    item: ListedRecord,
    eventType: string | undefined,
    subscriptionId: string | undefined,
  ): NotificationSummary {
    const summary: NotificationSummary = {
      id: item.id,
      state: item.state,
      attempts: item.attempts,
      updatedAt: item.updatedAt,
    };
    const outcome = outcomeOf(item);
    if (outcome !== undefined) summary.outcome = outcome;
    if (eventType !== undefined) summary.eventType = eventType;
    if (subscriptionId !== undefined) summary.subscriptionId = subscriptionId;
    if (item.order) summary.orderKey = item.order.key;
    if (item.order?.position !== undefined) summary.position = item.order.position;
    return summary;
  }

  async function listNotifications(request: NotificationListOptions = {}): Promise<NotificationPage> {
    if (!store.list) return listFromQueue(request);
    const limit = pageLimit(request.limit);
    const query = storeQuery(request);
    pageCursor(request.cursor);
    const joined = request.eventType !== undefined || request.subscriptionId !== undefined;
    const items: NotificationSummary[] = [];
    let cursor = request.cursor;
    // The store applies every filter along its indexes; the event type and subscription are checked
    // again on the lines (a store that keeps neither, or records written before it did, pass its
    // filter only as told by their jobs): read on, a store page at a time, until this page is full or
    // the store has no more.
    for (let pages = 0; ; pages++) {
      const page = await store.list({
        ...query,
        limit: joined ? Math.max(limit - items.length, 50) : limit,
        ...(cursor ? { cursor } : {}),
      });
      for (const summary of await summariesOf(page.items))
        if (!joined || matchesJoined(summary, request)) items.push(summary);
      cursor = page.cursor;
      if (!cursor || items.length >= limit || !joined || pages >= 20) return cursor ? { items, cursor } : { items };
    }
  }

  /** Without a store that lists: the queue's dead letters, newest first. */
  async function listFromQueue(request: NotificationListOptions): Promise<NotificationPage> {
    if (!jobs)
      throw new AdminError(
        "the store cannot list its records and there is no queue with jobs to list from",
        "MW_ADMIN_NO_LIST",
      );
    const limit = request.limit ?? 50;
    const start = Number(request.cursor ?? 0) || 0;
    const ids = await jobs.failed(start, limit);
    const items: NotificationSummary[] = [];
    for (const id of ids) {
      const record = await store.get(id);
      const { eventType, subscriptionId } = await aboutRow(id, undefined);
      const summary: NotificationSummary = {
        id,
        state: record?.state ?? "failed",
        attempts: record?.attempts ?? 0,
        updatedAt: 0,
      };
      if (record && outcomeOf(record) !== undefined) summary.outcome = outcomeOf(record)!;
      if (eventType !== undefined) summary.eventType = eventType;
      if (subscriptionId !== undefined) summary.subscriptionId = subscriptionId;
      if (matchesJoined(summary, request) && (request.state === undefined || summary.state === request.state))
        items.push(summary);
    }
    return ids.length === limit ? { items, cursor: String(start + limit) } : { items };
  }

  /**
   * A record by id alone: unordered records are found by id; one claimed in order is found through
   * its job (which names its order key) or, failing that, in the store's list.
   */
  async function findRecord(
    id: string,
  ): Promise<{ record: IdempotencyRecord; order?: OrderClaim; updatedAt?: number } | undefined> {
    if (store.list) {
      // The list tells the record's order key and time of change, which `get` does not.
      const [found] = (await store.list({ id, limit: 1 })).items;
      if (!found) return undefined;
      const { id: _id, updatedAt, order, ...record } = found;
      return order ? { record, order, updatedAt } : { record, updatedAt };
    }
    // Without a list, a record claimed in order is found under the order key its job names.
    const job = await jobs?.view(id).catch(() => undefined);
    const record = await store.get(job?.order ? { id, order: job.order } : id);
    return record ? (job?.order ? { record, order: job.order } : { record }) : undefined;
  }

  async function getNotification(id: string): Promise<NotificationDetail | undefined> {
    const found = await findRecord(id);
    const { job, recording, eventType, subscriptionId } = await about(id, found?.order);
    if (!found && !job && !recording) return undefined;
    const detail: NotificationDetail = { id, timeline: [] };
    if (found) {
      const { record } = found;
      detail.record = { state: record.state, attempts: record.attempts };
      const outcome = outcomeOf(record);
      if (outcome !== undefined) detail.record.outcome = outcome;
      if (record.answer) detail.record.answer = { processed: record.answer.processed, message: record.answer.message };
      if (record.leaseUntil !== undefined) detail.record.leaseUntil = record.leaseUntil;
      if (found.updatedAt !== undefined) detail.record.updatedAt = found.updatedAt;
      if (found.order) detail.ordering = await orderingState(found.order, record.state);
    }
    if (eventType !== undefined) detail.eventType = eventType;
    if (subscriptionId !== undefined) detail.subscriptionId = subscriptionId;
    if (job) detail.job = redactedJob(job);
    if (recording) detail.recording = redactedRecording(recording);
    const failures = (await jobs?.failures(id).catch(() => undefined)) ?? [];
    detail.timeline = timelineOf(detail, failures);
    return detail;
  }

  async function orderingState(order: OrderClaim, recordState?: RecordState): Promise<OrderingState> {
    const state: OrderingState = { key: order.key, waiting: [], stale: [] };
    if (order.position !== undefined) state.position = order.position;
    const held = await heldBy(order.key);
    if (held !== undefined) state.heldBy = held;
    if (!store.list) return state;
    const page = await store.list({ orderKey: order.key, limit: 1_000 });
    const byPosition = (a: ListedRecord, b: ListedRecord) =>
      (a.order?.position ?? "") < (b.order?.position ?? "") ? -1 : 1;
    for (const item of [...page.items].sort(byPosition)) {
      if (item.state === "queued") state.waiting.push(item.id);
      if (item.state === "completed" && item.answer?.message.startsWith("stale")) state.stale.push(item.id);
      else if (item.state === "completed" && item.order?.position) state.newestCompleted = item.order.position;
    }
    const { position } = order;
    if (recordState === "failed" && position !== undefined && state.newestCompleted !== undefined)
      if (isBefore(position, state.newestCompleted)) state.staleIfRedriven = state.newestCompleted;
    return state;
  }

  async function heldBy(orderKey: string): Promise<string | undefined> {
    return Promise.resolve(store.lanes?.heldBy({ key: orderKey })).catch(() => undefined);
  }

  /** Of these dead letters, those a redrive would find stale (see `OrderingState.staleIfRedriven`). */
  async function staleOnRedrive(ids: readonly string[]): Promise<string[]> {
    const found = await Promise.all(ids.map(async (id) => ({ id, found: await findRecord(id) })));
    const lanes = new Map<string, Promise<OrderingState>>();
    const stale: string[] = [];
    for (const { id, found: one } of found) {
      if (!one?.order || one.record.state !== "failed") continue;
      const key = one.order.key;
      if (!lanes.has(key)) lanes.set(key, orderingState({ key }));
      const newest = (await lanes.get(key)!).newestCompleted;
      if (one.order.position !== undefined && newest !== undefined && isBefore(one.order.position, newest))
        stale.push(id);
    }
    return stale;
  }

  /** A redrive runs dead letters through the durable queue, or those a store kept through a receiver's sweep. */
  function requireRedrive(): void {
    if (!store.kept) requireQueue("redrive");
  }

  function requireQueue(what: string): NotificationQueue {
    if (!queue?.durable)
      throw new AdminError(
        `${what} needs the receiver's durable queue (createAdmin's queue option)`,
        "MW_ADMIN_NO_QUEUE",
      );
    return queue;
  }

  /**
   * Hand a notification to the queue as a delivery would: claim it for the queue (in order, when it
   * was claimed in order), enqueue it under that claim, mark it queued. A completed record answers
   * "already processed" at the claim, so nothing runs again.
   */
  async function replay(id: string): Promise<AdminReplayResult> {
    const target = requireQueue("replay");
    const found = await findRecord(id);
    if (found?.record.state === "completed")
      return { status: "completed", message: `already processed: ${found.record.answer?.message ?? ""}` };
    // A dead letter's job has the notification as it arrived (masked or sealed): put it back to work.
    if (await jobs?.retryFailed(id, failureOf(found)))
      return { status: "queued", message: "its failed job was put back to work" };
    const recording = await recorder?.find(id);
    if (!recording) throw new AdminError(`no recording of ${id} to replay, and no failed job`, "MW_ADMIN_NOT_FOUND");
    const owner = `console:${randomUUID()}`;
    const fingerprint = found?.record.fingerprint ?? `replay:${randomUUID()}`;
    const order = found?.order;
    // Claimed for the queue as a receiver claims it; a queued record (its job gone) is taken over.
    const takeOver = found?.record.state === "queued";
    const base = { id, fingerprint, owner, leaseMs, takeOver };
    const claim = await store.claim(order ? { ...base, kind: "append", order } : { ...base, kind: "enqueue" });
    switch (claim.status) {
      case "completed":
        return { status: "completed", message: `already processed: ${claim.answer.message}` };
      case "queued":
        return { status: "queued", message: "already queued" };
      case "processing":
      case "conflict":
        return { status: "busy", message: "being processed now; try again later" };
    }
    try {
      // A dead letter holding no notification (see `lostDeadLetter`) makes way: its id is the job's.
      if (await lostDeadLetter(id)) await jobs?.removeFailed(id);
      await target.enqueue({
        id,
        fingerprint,
        notification: recording.notification as SubscriptionNotification,
        headers: keptHeaders(recording.headers),
        receivedAt: Date.now(),
        owner,
        ...(claim.order ? { order: claim.order } : {}),
        run: async () => {},
      });
      await store.markQueued(claim);
    } catch (err) {
      await Promise.resolve(store.release(claim)).catch(() => {});
      throw err;
    }
    return { status: "queued", message: "replayed from its recording" };
  }

  type Found = NonNullable<Awaited<ReturnType<typeof findRecord>>>;

  /**
   * Whether the dead letter of `id` holds no notification, neither in clear nor sealed: a worker wrote
   * it for a notification whose data was lost before it ran, so every redrive lists it. Only a
   * recording (`replay`) can run it again.
   */
  async function lostDeadLetter(id: string): Promise<boolean> {
    const view = await jobs?.view(id).catch(() => undefined);
    return view?.state === "failed" && !view.sealed && view.notification === undefined;
  }

  /** Redrive one dead letter: undefined when it went back to work, else why not. */
  async function redriveOne(id: string, found: Found | undefined): Promise<string | undefined> {
    const state = found?.record.state;
    if (state === "completed") return `already completed: ${found!.record.answer?.message ?? ""}`;
    if (state === "processing") return "being processed now";
    // Accepted by an in-process queue on a store that kept it: back to processing, for a receiver's sweep to run.
    if (state === "failed" && store.kept && (await store.kept.rerun(id, `console:${randomUUID()}`))) return undefined;
    if (await jobs?.retryFailed(id, failureOf(found))) return undefined;
    const noJob = !jobs
      ? "the queue keeps no jobs to redrive"
      : (await lostDeadLetter(id))
        ? `its dead letter in the ${jobs.kind} queue holds no notification to run (its data was lost before it ran)`
        : `no dead letter of it in the ${jobs.kind} queue`;
    if (!recorder) return `${noJob}, and no recorder to replay it from`;
    try {
      const result = await replay(id);
      return result.status === "queued" ? undefined : result.message;
    } catch (err) {
      if (err instanceof AdminError && err.code === "MW_ADMIN_NOT_FOUND") return `${noJob}, and no recording of it`;
      throw err;
    }
  }

  /**
   * Redrive dead letters: an ordered subscription's oldest first, each the next only once the one
   * before has settled (run by a worker: completed, or a dead letter again), so none runs after a
   * newer one of its subscription and turns stale; subscriptions side by side.
   */
  async function redriveAll(ids: readonly string[]): Promise<AdminRedriveResult> {
    const unique = [...new Set(ids)];
    const found = new Map(await Promise.all(unique.map(async (id) => [id, await findRecord(id)] as const)));
    const { done, skipped } = await redriveInOrder(
      unique,
      (id) => found.get(id)?.order,
      (id) => id,
      { redriveOne: (id) => redriveOne(id, found.get(id)), settled },
    );
    return {
      matched: ids.length,
      redriven: done.length,
      ids: done,
      skipped: skipped.map(({ letter, reason }) => ({ id: letter, reason })),
    };
  }

  /** Whether a redriven notification was run by a worker within a lease: completed, or failed for good again. */
  async function settled(id: string): Promise<boolean> {
    const until = Date.now() + leaseMs;
    while (Date.now() < until) {
      const record = (await findRecord(id))?.record;
      if (record?.state === "completed") return true;
      if (record?.state === "failed") {
        const job = await jobs?.view(id).catch(() => undefined);
        if (!job || job.state === "failed") return true;
      }
      await new Promise((resolve) => setTimeout(resolve, SETTLE_POLL_MS));
    }
    return false;
  }

  async function matchingIds(filter: NotificationFilter): Promise<string[]> {
    const ids: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await listNotifications({ ...filter, limit: 1_000, ...(cursor ? { cursor } : {}) });
      for (const item of page.items) ids.push(item.id);
      cursor = page.cursor;
    } while (cursor && ids.length < MAX_SCAN);
    return ids;
  }

  const admin: Admin = {
    get canAct() {
      return queue?.durable === true;
    },
    listNotifications,
    getNotification,
    replay,

    async redrive(request) {
      if ("ids" in request) {
        requireRedrive();
        return redriveAll(request.ids);
      }
      // By filter: dead letters unless another state is asked for, counted first.
      const filter: NotificationFilter = { state: "failed", ...request.filter };
      const matched = await matchingIds(filter);
      if (request.dryRun)
        return {
          matched: matched.length,
          redriven: 0,
          ids: matched,
          skipped: [],
          staleIfRedriven: await staleOnRedrive(matched),
        };
      requireRedrive();
      return redriveAll(matched);
    },

    async discard(id, { reason }) {
      if (typeof reason !== "string" || reason.trim() === "")
        throw new AdminError("discard needs a reason, kept with the record for audit", "MW_ADMIN_BAD_FILTER");
      const found = await findRecord(id);
      if (!found) throw new AdminError(`no record of ${id}`, "MW_ADMIN_NOT_FOUND");
      if (found.record.state === "completed") return { discarded: false, message: "already completed" };
      // A worker's claim on a queued record in order runs its key's first waiting notification, which may be another
      // notification: the console never takes that path. Such a record waits its turn, or fails first.
      if (found.record.state === "queued" && found.order)
        return { discarded: false, message: "waiting its turn in its subscription's order; not discarded" };
      // Claimed like a delivery (its key held, when in order, but its position not moved), then
      // completed with the reason as its answer: a redelivery is answered as a duplicate.
      const owner = `console:${randomUUID()}`;
      const order = found.order ? { key: found.order.key } : undefined;
      // A dead letter holding its lane (`onDeadLetter: "hold"`): discarded, the rest of the lane goes on.
      const heldItsLane =
        order !== undefined && (await Promise.resolve(store.lanes?.heldBy(order)).catch(() => undefined)) === id;
      // A queued record is taken as a worker takes it; any other, as a receiver claims one to run.
      const claim = await store.claim({
        kind: found.record.state === "queued" ? "take" : "run",
        id,
        fingerprint: found.record.fingerprint,
        owner,
        leaseMs,
        ...(order ? { order } : {}),
      });
      if (claim.status !== "claimed" && claim.status !== "stale")
        return { discarded: false, message: `not discarded: ${claim.status}` };
      if (claim.id !== id) throw coded(new Error(`discard claimed ${claim.id} instead of ${id}`), "MW_INTERNAL");
      const message = `${DISCARDED}${redactCardNumbers(reason.trim()).slice(0, 500)}`;
      const done = await store.complete(claim, { processed: true, message });
      // Its job, put back rather than removed, is the lane's drain job: its record completed, it runs
      // what waited behind it (a lane's waiting notifications have no job of their own).
      if (done && heldItsLane) await jobs?.retryFailed(id).catch(() => false);
      else if (done) await jobs?.removeFailed(id).catch(() => false);
      return done ? { discarded: true, message } : { discarded: false, message: "claim lost before completing" };
    },

    heldBy,

    async overview({ sample = 1_000 } = {}) {
      const overview: Overview = { counted: 0, byState: {}, byEventType: {}, deadLetters: [] };
      for (const state of STATES) overview.byState[state] = 0;
      if (store.list) {
        let cursor: string | undefined;
        do {
          const page = await listNotifications({
            limit: Math.min(1_000, sample - overview.counted),
            ...(cursor ? { cursor } : {}),
          });
          for (const item of page.items) {
            overview.counted++;
            overview.byState[item.state] = (overview.byState[item.state] ?? 0) + 1;
            const type = item.eventType ?? "(unknown)";
            overview.byEventType[type] = (overview.byEventType[type] ?? 0) + 1;
            if (item.state === "failed" && overview.deadLetters.length < 20) overview.deadLetters.push(item);
          }
          cursor = page.cursor;
        } while (cursor && overview.counted < sample);
      }
      if (jobs) overview.queue = { kind: jobs.kind, ...(await jobs.counts()) };
      return overview;
    },
  };
  return {
    admin,
    redrive: {
      redrive: async ({ id }) => redriveOne(id, await findRecord(id)),
      settled: ({ id, order }) => (order ? settled(id) : Promise.resolve(true)),
    },
  };
}

/** The failure a dead letter is redriven after, as its job keeps it for the timeline. */
function failureOf(found: { record: IdempotencyRecord; updatedAt?: number } | undefined): JobFailure {
  return {
    at: found?.updatedAt ?? Date.now(),
    attempts: found?.record.attempts ?? 0,
    ...(found?.record.error !== undefined ? { reason: found.record.error } : {}),
  };
}

/** A page's size, checked here: the store's own check would fail as the store failing. */
function pageLimit(limit: number | undefined): number {
  if (limit === undefined) return 50;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIST_LIMIT)
    throw new AdminError(
      `limit must be a whole number from 1 to ${MAX_LIST_LIMIT}; got ${limit}`,
      "MW_ADMIN_BAD_FILTER",
    );
  return limit;
}

function pageCursor(cursor: string | undefined): void {
  try {
    listCursor.parse(cursor);
  } catch {
    throw new AdminError("cursor is not one a page gave; start again from the first page", "MW_ADMIN_BAD_FILTER");
  }
}

function storeQuery(request: NotificationListOptions): ListQuery {
  const query: ListQuery = {};
  if (request.state !== undefined) {
    if (!STATES.includes(request.state))
      throw new AdminError(
        `state must be one of ${STATES.join(", ")}; got ${String(request.state)}`,
        "MW_ADMIN_BAD_FILTER",
      );
    query.state = request.state;
  }
  if (request.eventType !== undefined) query.eventType = listedText(request.eventType);
  // A lane's order key (`merchant:subscription`) names its subscription, which every record of the lane keeps.
  const subscription = request.subscriptionId;
  if (subscription !== undefined) query.subscriptionId = listedText(subscriptionOfKey(subscription) ?? subscription);
  const since = timeOf("since", request.since);
  const until = timeOf("until", request.until);
  if (since !== undefined) query.since = since;
  if (until !== undefined) query.until = until;
  return query;
}

function timeOf(name: string, value: number | string | undefined): number | undefined {
  if (value === undefined || value === "") return undefined;
  const ms = typeof value === "number" ? value : Date.parse(value);
  if (!Number.isFinite(ms))
    throw new AdminError(`${name} must be a date-time or epoch ms; got ${String(value)}`, "MW_ADMIN_BAD_FILTER");
  return ms;
}

function matchesJoined(summary: NotificationSummary, filter: NotificationFilter): boolean {
  if (filter.eventType !== undefined && !sameListed(summary.eventType, filter.eventType)) return false;
  const wanted = filter.subscriptionId;
  if (wanted === undefined) return true;
  return (
    sameListed(summary.subscriptionId, wanted) ||
    summary.orderKey === wanted ||
    (summary.orderKey !== undefined && subscriptionOfKey(summary.orderKey) === wanted)
  );
}

/** Whether a line's value is the filter's, as records keep both (card-like runs masked). */
const sameListed = (value: string | undefined, wanted: string) =>
  value !== undefined && (value === wanted || listedText(value) === listedText(wanted));

/** The answer's message when completed, the failure reason when failed (the stores keep no handler error text). */
function outcomeOf(record: IdempotencyRecord): string | undefined {
  if (record.state === "completed") return record.answer?.message;
  if (record.state === "failed") return record.error;
  return undefined;
}

/** A job as the console may show it: kept headers only, the notification redacted, never a sealed payload. */
function redactedJob(job: JobView): JobView {
  const { notification, ...rest } = job;
  const view: JobView = { ...rest, headers: keptHeaders(job.headers) };
  if (notification !== undefined && !job.sealed) view.notification = redactNotification(notification);
  return view;
}

/** A recording redacted once more, in case it was written by a recorder with `pii: false`. */
function redactedRecording(recording: RecordedNotification): RecordedNotification {
  return {
    received_at: recording.received_at,
    headers: keptHeaders(recording.headers),
    notification: redactNotification(recording.notification),
    answer: recording.answer,
  };
}

const attemptsText = (count: number) => `${count} attempt${count === 1 ? "" : "s"}`;

/** received → claimed → queued → attempts → completed or failed, from what the record, job and recording tell. */
function timelineOf(detail: NotificationDetail, failures: readonly JobFailure[]): TimelineEvent[] {
  const events: TimelineEvent[] = [];
  if (detail.recording) {
    const at = Date.parse(detail.recording.received_at);
    events.push({
      at,
      what: "received",
      detail: `answered ${detail.recording.answer.status}: ${detail.recording.answer.message}`,
    });
  }
  for (const failure of failures)
    events.push({
      at: failure.at,
      what: "failed",
      detail: `${attemptsText(failure.attempts)}; ${failure.reason ?? ""} (then redriven)`,
    });
  const job = detail.job;
  if (job) {
    events.push({ at: job.queuedAt, what: "queued" });
    if (job.processedAt !== undefined)
      events.push({
        at: job.processedAt,
        what: "attempt",
        detail: `attempt ${Math.max(1, job.attemptsMade)}${job.sealed ? " (sealed job)" : ""}`,
      });
    if (job.state === "failed" && job.finishedAt !== undefined)
      events.push({ at: job.finishedAt, what: "failed", detail: "the job failed for good (dead letter)" });
  }
  const record = detail.record;
  if (record) {
    const at = record.updatedAt ?? job?.finishedAt ?? job?.processedAt ?? events.at(-1)?.at ?? 0;
    const attempts = attemptsText(record.attempts);
    if (record.state === "completed")
      events.push({ at, what: "completed", detail: `${attempts}; ${record.outcome ?? ""}` });
    else if (record.state === "failed")
      events.push({ at, what: "failed", detail: `${attempts}; ${record.outcome ?? ""}` });
    else if (record.state === "processing") events.push({ at, what: "processing", detail: attempts });
    else events.push({ at, what: "queued", detail: attempts });
  }
  return events.sort((a, b) => a.at - b.at);
}
