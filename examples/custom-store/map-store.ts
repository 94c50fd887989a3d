import type { ClaimRequest, ClaimResult, IdempotencyRecord, IdempotencyStore } from "merchant-webhooks";

/**
 * A store of your own: records in a Map (one process; put your database's reads and writes in its place).
 * Without `lanes` and without `order`: use it with a receiver that has no `ordering`.
 */
export function mapStore(): IdempotencyStore {
  const records = new Map<string, IdempotencyRecord>();
  /** The record `claim` names, when that owner still holds it in one of `states`. */
  const owned = (claim: { id: string; owner: string }, states: IdempotencyRecord["state"][]) => {
    const record = records.get(claim.id);
    return record?.owner === claim.owner && states.includes(record.state) ? record : undefined;
  };

  return {
    claim(request: ClaimRequest): ClaimResult {
      if (request.order) throw new TypeError("mapStore keeps no order: use it without `ordering`");
      const { id, fingerprint, owner, leaseMs } = request;
      const now = Date.now();
      const record = records.get(id);
      if (record?.state === "completed")
        return record.fingerprint === fingerprint
          ? { status: "completed", answer: record.answer! }
          : { status: "conflict" };
      // A live claim is left alone, but by a worker whose job names it as the receiver's.
      const handedOver = request.kind === "take" && record?.owner === request.handoffFrom;
      if (record?.state === "processing" && record.leaseUntil! > now && !handedOver)
        return { status: "processing", retryAfterMs: record.leaseUntil! - now };
      if (record?.state === "queued" && !takesQueued(request))
        return record.fingerprint === fingerprint
          ? { status: "queued" }
          : { status: "processing", retryAfterMs: leaseMs };
      // New, failed, lapsed, handed over or taken from the queue: this claim runs it.
      const attempts = (record?.attempts ?? 0) + 1;
      records.set(id, { state: "processing", fingerprint, owner, leaseUntil: now + leaseMs, attempts });
      return { status: "claimed", id, owner, attempt: attempts };
    },
    extend(claim, leaseMs = 30_000) {
      const record = owned(claim, ["processing"]);
      if (record) record.leaseUntil = Date.now() + leaseMs;
      return record !== undefined;
    },
    complete(claim, answer) {
      const record = owned(claim, ["processing"]);
      if (record) Object.assign(record, { state: "completed", answer, leaseUntil: undefined });
      return record !== undefined;
    },
    fail(claim, error) {
      const record = owned(claim, ["processing"]);
      if (record) Object.assign(record, { state: "failed", error, leaseUntil: undefined });
      return record !== undefined;
    },
    markQueued(claim) {
      const record = owned(claim, ["processing"]);
      if (record) Object.assign(record, { state: "queued", leaseUntil: undefined });
      return record !== undefined;
    },
    release(claim) {
      return owned(claim, ["processing", "queued"]) !== undefined && records.delete(claim.id);
    },
    get: (ref) => records.get(typeof ref === "string" ? ref : ref.id),
  };
}

/** Whether a claim takes a queued record: a worker's, or a receiver's whose job for it is gone. */
function takesQueued(request: ClaimRequest): boolean {
  switch (request.kind) {
    case "take":
      return true;
    case "enqueue":
    case "append":
      return request.takeOver === true;
    case "run":
    case undefined:
      return false;
  }
}
