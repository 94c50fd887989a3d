import type { IdempotencyStore } from "merchant-webhooks";
import { buildNotification } from "merchant-webhooks/testing";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { type ClaimedHooks, runClaimed } from "../../src/dispatch/run-claimed.js";
import type { ClaimHandle } from "../../src/idempotency/store.js";
import { claimsInTransaction } from "../../src/idempotency/transaction.js";

export interface ContractStoreOptions {
  retentionSeconds?: number;
}

/** A fresh, empty store for one test (its own prefix, for a shared backend). */
export type MakeStore = (options: ContractStoreOptions) => IdempotencyStore | Promise<IdempotencyStore>;

/** Moves the store's clock forward. Without it the suite waits in real time (leases are kept short). */
export type AdvanceTime = (ms: number) => void | Promise<void>;

const LEASE = 150;

/** Opens fresh stores for the tests of the describe block it is called in, closing them after each test. */
export function storesClosedAfterEach(
  makeStore: MakeStore,
): (options?: ContractStoreOptions) => Promise<IdempotencyStore> {
  let opened: IdempotencyStore[] = [];
  afterEach(async () => {
    for (const store of opened) await store.close?.();
    opened = [];
  });
  return async (options = {}) => {
    const store = await makeStore(options);
    opened.push(store);
    return store;
  };
}
const answer = { processed: true, message: "processed ✓" };

/**
 * The behaviour every `IdempotencyStore` must share: the receiver and the workers are written against
 * it, so a store that passes can replace another without changing what a sender sees.
 */
export function storeContract(name: string, makeStore: MakeStore, advanceTime?: AdvanceTime): void {
  const advance = advanceTime ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));

  describe(`${name}: the store contract`, () => {
    const open = storesClosedAfterEach(makeStore);
    const claim = (
      store: IdempotencyStore,
      owner: string,
      fingerprint = "f",
      extra: { take?: boolean; leaseMs?: number } = {},
    ) =>
      store.claim({
        kind: extra.take ? "take" : "run",
        id: "n-1",
        fingerprint,
        owner,
        leaseMs: extra.leaseMs ?? LEASE,
      });

    it("claims an unknown id for its first owner and records it as processing", async () => {
      const store = await open();
      expect(await store.get("n-1")).toBeUndefined();
      expect(await claim(store, "o1")).toEqual({ status: "claimed", id: "n-1", owner: "o1", attempt: 1 });
      expect(await store.get("n-1")).toEqual({
        state: "processing",
        fingerprint: "f",
        owner: "o1",
        attempts: 1,
        leaseUntil: expect.any(Number),
      });
    });

    it("answers another delivery during a live lease with the time left, whatever its payload", async () => {
      const store = await open();
      await claim(store, "o1");
      const second = await claim(store, "o2");
      expect(second).toEqual({ status: "processing", retryAfterMs: expect.any(Number) });
      const { retryAfterMs } = second as { retryAfterMs: number };
      expect(retryAfterMs).toBeGreaterThan(0);
      expect(retryAfterMs).toBeLessThanOrEqual(LEASE);
      expect(await claim(store, "o2", "other")).toEqual({ status: "processing", retryAfterMs: expect.any(Number) });
      expect(await store.get("n-1")).toMatchObject({ owner: "o1", attempts: 1, fingerprint: "f" });
    });

    it("gives exactly one of many concurrent claims of one id", async () => {
      const store = await open();
      // A lease no claim outlives however slow the machine: this is about the race, not the lease's end.
      const results = await Promise.all(
        Array.from({ length: 25 }, (_, i) => claim(store, `o${i}`, "f", { leaseMs: 60_000 })),
      );
      expect(results.filter((result) => result.status === "claimed")).toHaveLength(1);
      expect(results.filter((result) => result.status === "processing")).toHaveLength(24);
    });

    it("lets another owner take over an expired lease; the old owner then changes nothing", async () => {
      const store = await open();
      await claim(store, "o1");
      await advance(LEASE + 20);
      expect(await claim(store, "o2")).toEqual({ status: "claimed", id: "n-1", owner: "o2", attempt: 2 });
      expect(await store.complete({ id: "n-1", owner: "o1" }, { processed: false, message: "late" })).toBe(false);
      expect(await store.extend({ id: "n-1", owner: "o1" }, LEASE)).toBe(false);
      expect(await store.fail({ id: "n-1", owner: "o1" }, "late")).toBe(false);
      expect(await store.markQueued({ id: "n-1", owner: "o1" })).toBe(false);
      expect(await store.release({ id: "n-1", owner: "o1" })).toBe(false);
      expect(await store.get("n-1")).toMatchObject({ state: "processing", owner: "o2", attempts: 2 });
      expect(await store.complete({ id: "n-1", owner: "o2" }, answer)).toBe(true);
      expect(await store.get("n-1")).toMatchObject({ state: "completed", owner: "o2", attempts: 2, answer });
    });

    it("takes over a lapsed lease before looking at the payload, and keeps the new payload's fingerprint", async () => {
      const store = await open();
      await claim(store, "o1");
      await advance(LEASE + 20);
      expect(await claim(store, "o2", "other")).toEqual({ status: "claimed", id: "n-1", owner: "o2", attempt: 2 });
      expect(await store.get("n-1")).toMatchObject({ state: "processing", owner: "o2", fingerprint: "other" });
      expect(await store.complete({ id: "n-1", owner: "o2" }, answer)).toBe(true);
      expect(await claim(store, "o3", "other")).toEqual({ status: "completed", answer });
      expect(await claim(store, "o3", "f")).toEqual({ status: "conflict" });
    });

    it("extends a live lease for its owner only", async () => {
      const store = await open();
      await claim(store, "o1");
      await advance(100);
      // Extended well past the first lease, so a stall of the machine between the calls (real time on
      // the networked stores) cannot eat the margin the last check reads.
      expect(await store.extend({ id: "n-1", owner: "o2" }, 2_000)).toBe(false);
      expect(await store.extend({ id: "n-1", owner: "o1" }, 2_000)).toBe(true);
      await advance(100); // past the first lease, within the extended one
      const again = await claim(store, "o2");
      expect(again).toMatchObject({ status: "processing" });
      expect((again as { retryAfterMs: number }).retryAfterMs).toBeGreaterThan(LEASE);
    });

    it("answers a completed id with the stored answer, and a different payload as a conflict", async () => {
      const store = await open();
      await claim(store, "o1");
      expect(await store.complete({ id: "n-1", owner: "o1" }, answer)).toBe(true);
      expect(await claim(store, "o2")).toEqual({ status: "completed", answer });
      expect(await claim(store, "o2", "other")).toEqual({ status: "conflict" });
      const record = await store.get("n-1");
      expect(record).toEqual({ state: "completed", fingerprint: "f", owner: "o1", attempts: 1, answer });
    });

    it("records an outcome once: a completed record takes no second complete, fail, extend or release", async () => {
      const store = await open();
      await claim(store, "o1");
      await store.complete({ id: "n-1", owner: "o1" }, answer);
      expect(await store.complete({ id: "n-1", owner: "o1" }, { processed: true, message: "again" })).toBe(false);
      expect(await store.fail({ id: "n-1", owner: "o1" }, "handler_failed")).toBe(false);
      expect(await store.extend({ id: "n-1", owner: "o1" }, LEASE)).toBe(false);
      expect(await store.release({ id: "n-1", owner: "o1" })).toBe(false);
      expect(await store.get("n-1")).toMatchObject({ state: "completed", answer });
    });

    it("changes nothing for an id it does not know", async () => {
      const store = await open();
      expect(await store.complete({ id: "n-1", owner: "o1" }, answer)).toBe(false);
      expect(await store.fail({ id: "n-1", owner: "o1" }, "x")).toBe(false);
      expect(await store.extend({ id: "n-1", owner: "o1" }, LEASE)).toBe(false);
      expect(await store.markQueued({ id: "n-1", owner: "o1" })).toBe(false);
      expect(await store.release({ id: "n-1", owner: "o1" })).toBe(false);
      expect(await store.get("n-1")).toBeUndefined();
    });

    it("lets a failed record be taken over at once, counting attempts, even with a different payload", async () => {
      const store = await open();
      await claim(store, "o1");
      expect(await store.fail({ id: "n-1", owner: "o2" }, "handler_failed")).toBe(false);
      expect(await store.fail({ id: "n-1", owner: "o1" }, "handler_failed")).toBe(true);
      expect(await store.get("n-1")).toEqual({
        state: "failed",
        fingerprint: "f",
        owner: "o1",
        attempts: 1,
        error: "handler_failed",
      });
      expect(await claim(store, "o2", "corrected")).toEqual({ status: "claimed", id: "n-1", owner: "o2", attempt: 2 });
      const record = await store.get("n-1");
      expect(record).toMatchObject({ state: "processing", fingerprint: "corrected", owner: "o2", attempts: 2 });
      expect(record).not.toHaveProperty("error");
      expect(await claim(store, "o3", "f")).toMatchObject({ status: "processing" });
      await advance(LEASE + 20);
      expect(await claim(store, "o3", "corrected")).toEqual({ status: "claimed", id: "n-1", owner: "o3", attempt: 3 });
    });

    it("keeps queued records for workers: receivers see them as accepted, workers take them over", async () => {
      const store = await open();
      await claim(store, "r");
      expect(await store.markQueued({ id: "n-1", owner: "someone-else" })).toBe(false);
      expect(await store.markQueued({ id: "n-1", owner: "r" })).toBe(true);
      await advance(LEASE + 20); // a queued record has no lease to run out
      expect(await claim(store, "r2")).toEqual({ status: "queued" });
      // A different payload under a queued id is not acknowledged: it waits for the queued one's outcome.
      expect(await claim(store, "r2", "other")).toEqual({ status: "processing", retryAfterMs: expect.any(Number) });
      expect(await claim(store, "w", "f", { take: true })).toEqual({
        status: "claimed",
        id: "n-1",
        owner: "w",
        attempt: 2,
      });
      expect(await store.complete({ id: "n-1", owner: "w" }, answer)).toBe(true);
      expect(await claim(store, "r3")).toEqual({ status: "completed", answer });
    });

    it("lets a worker take over the receiver's claim its job names, before the receiver marks it queued", async () => {
      const store = await open();
      await claim(store, "r");
      const worker = await store.claim({
        id: "n-1",
        fingerprint: "f",
        owner: "w",
        leaseMs: LEASE,
        kind: "take",
        handoffFrom: "r",
      });
      expect(worker).toEqual({ status: "claimed", id: "n-1", owner: "w", attempt: 2 });
      expect(await store.markQueued({ id: "n-1", owner: "r" })).toBe(false);
      // Only a worker, and only for the token its job names.
      expect(
        await store.claim({ kind: "take", id: "n-1", fingerprint: "f", owner: "x", leaseMs: LEASE, handoffFrom: "r" }),
      ).toMatchObject({ status: "processing" });
      // A receiver's claim cannot name a hand-off at all.
      expect(
        // @ts-expect-error a hand-off is a worker's take's alone
        await store.claim({ kind: "run", id: "n-1", fingerprint: "f", owner: "x", leaseMs: LEASE, handoffFrom: "w" }),
      ).toMatchObject({ status: "processing" });
      expect(await store.complete({ id: "n-1", owner: "w" }, answer)).toBe(true);
    });

    it("releases a processing or queued claim for its owner, so a redelivery starts afresh", async () => {
      const store = await open();
      await claim(store, "o1");
      expect(await store.release({ id: "n-1", owner: "other" })).toBe(false);
      expect(await store.release({ id: "n-1", owner: "o1" })).toBe(true);
      expect(await store.get("n-1")).toBeUndefined();
      expect(await claim(store, "o2", "new")).toEqual({ status: "claimed", id: "n-1", owner: "o2", attempt: 1 });
      await store.markQueued({ id: "n-1", owner: "o2" });
      expect(await store.release({ id: "n-1", owner: "o2" })).toBe(true);
      expect(await store.get("n-1")).toBeUndefined();
    });

    it("forgets a record after the retention period, counted from its last change", async () => {
      const store = await open({ retentionSeconds: 1 });
      await claim(store, "o1");
      await advance(600);
      await store.complete({ id: "n-1", owner: "o1" }, answer);
      await advance(600); // 1.2 s after the claim, 0.6 s after the completion
      expect(await store.get("n-1")).toMatchObject({ state: "completed" });
      await advance(500);
      expect(await store.get("n-1")).toBeUndefined();
      expect(await claim(store, "o2", "g")).toEqual({ status: "claimed", id: "n-1", owner: "o2", attempt: 1 });
    });

    it("keeps ids apart whatever characters they hold", async () => {
      const store = await open();
      const ids = ["evt:1", "evt:1 ", "{evt}:1", "évt-١", "evt*1"];
      for (const [i, id] of ids.entries()) {
        expect(await store.claim({ id, fingerprint: `f${i}`, owner: `o${i}`, leaseMs: LEASE })).toEqual({
          status: "claimed",
          id,
          owner: `o${i}`,
          attempt: 1,
        });
      }
      for (const [i, id] of ids.entries())
        expect(await store.get(id)).toMatchObject({ fingerprint: `f${i}`, owner: `o${i}` });
    });
  });

  fencingContract(name, makeStore, advance);
}

/**
 * No effect without a live claim (issue 30), for the queue worker's and the Redis store's part: a
 * lapsed claim that was taken over changes nothing, a claim taken over mid-run aborts the first
 * holder's `ctx.signal`, and a handler never starts under a claim not confirmed live. Runs go through
 * `runClaimed`, the one run path of receivers and workers.
 */
function fencingContract(name: string, makeStore: MakeStore, advance: (ms: number) => void | Promise<void>): void {
  describe(`${name}: fencing (queue worker and Redis)`, () => {
    const open = storesClosedAfterEach(makeStore);
    const claimAs = (store: IdempotencyStore, owner: string, order?: { key: string; position: string }, id = "n-1") =>
      store.claim({ id, fingerprint: "f", owner, leaseMs: LEASE, ...(order ? { order } : {}) });
    /** Run `onRenew` under `claim` as a worker would: a lost claim ends in `leaseLost`, told here. */
    const run = (
      store: IdempotencyStore,
      claim: ClaimHandle,
      onRenew: (signal: AbortSignal) => Promise<void>,
      leaseFrom?: number,
    ) => {
      let lost = false;
      const hooks: ClaimedHooks = {
        retryCompletion: () => {},
        leaseLost: async () => {
          lost = true;
          throw new Error("lease lost");
        },
      };
      const done = runClaimed(
        {
          store,
          handlers: { onRenew: (_n, ctx) => onRenew(ctx.signal) },
          notification: buildNotification("SUBSCRIPTION_RENEW", { id: "n-1" }),
          claim,
          attempt: 1,
          headers: {},
          receivedAt: Date.now(),
          // Past half the lease: the run renews its claim a third of a lease apart.
          timeoutMs: 10_000,
          leaseMs: LEASE,
          ctxLogger: pino({ level: "silent" }),
          leaseFrom,
        },
        hooks,
      ).catch((err: unknown) => (lost ? "lease lost" : Promise.reject(err)));
      return { done, lost: () => lost };
    };

    it("refuses every write of a lapsed claim another owner took over, ordered or not", async () => {
      const store = await open();
      for (const order of [undefined, { key: "sub-1", position: "2026-03-01T02:00:00" }]) {
        const id = order ? "n-ordered" : "n-1";
        const held: ClaimHandle = { id, owner: `first-${order ? "o" : "u"}`, ...(order ? { order } : {}) };
        expect(await claimAs(store, held.owner, order, id)).toMatchObject({ status: "claimed" });
        await advance(LEASE + 20);
        const taker = `taker-${order ? "o" : "u"}`;
        expect(await claimAs(store, taker, order, id)).toMatchObject({ status: "claimed", owner: taker });
        expect(await store.complete(held, answer)).toBe(false);
        expect(await store.fail(held, "late")).toBe(false);
        expect(await store.extend(held, LEASE)).toBe(false);
        expect(await store.extend(held, 0)).toBe(false);
        expect(await store.get(order ? { id, order } : id)).toMatchObject({ state: "processing", owner: taker });
        expect(await store.complete({ ...held, owner: taker }, answer)).toBe(true);
      }
    });

    it("aborts the first holder's ctx.signal when its claim is taken over mid-run, and refuses its completion", async () => {
      const real = await open();
      // The first holder freezes: its renewals wait until it thaws (a stopped process sends none).
      let thaw!: () => void;
      const frozen = new Promise<void>((resolve) => (thaw = resolve));
      let freezing = false;
      const store: IdempotencyStore = {
        ...real,
        claim: real.claim.bind(real),
        complete: real.complete.bind(real),
        fail: real.fail.bind(real),
        markQueued: real.markQueued.bind(real),
        release: real.release.bind(real),
        get: real.get.bind(real),
        extend: async (claim, leaseMs) => {
          if (freezing) await frozen;
          return real.extend(claim, leaseMs);
        },
      };
      expect(await claimAs(real, "first")).toMatchObject({ status: "claimed" });
      let aborted = false;
      const first = run(store, { id: "n-1", owner: "first" }, async (signal) => {
        freezing = true;
        await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve()));
        aborted = true;
      });
      await advance(LEASE + 20);
      expect(await claimAs(real, "second")).toMatchObject({ status: "claimed", owner: "second" });
      thaw();
      expect(await first.done).toBe("lease lost");
      expect(aborted).toBe(true);
      expect(await real.get("n-1")).toMatchObject({ state: "processing", owner: "second" });
    });

    it("never starts a handler under a claim taken over before it started", async () => {
      const store = await open();
      expect(await claimAs(store, "first")).toMatchObject({ status: "claimed" });
      const claimSent = performance.now();
      await advance(LEASE + 20);
      expect(await claimAs(store, "second")).toMatchObject({ status: "claimed" });
      let ran = false;
      // Its claim was asked for over a lease ago (as by a worker whose job lookup was slow).
      const late = run(store, { id: "n-1", owner: "first" }, async () => void (ran = true), claimSent - LEASE);
      expect(await late.done).toBe("lease lost");
      expect(ran).toBe(false);
      expect(await store.get("n-1")).toMatchObject({ state: "processing", owner: "second" });
    });

    it("starts a handler under a lapsed claim nobody took over only once a renewal confirms it", async () => {
      const store = await open();
      expect(await claimAs(store, "first")).toMatchObject({ status: "claimed" });
      const claimSent = performance.now();
      await advance(LEASE + 20);
      let ran = 0;
      const late = run(store, { id: "n-1", owner: "first" }, async () => void ran++, claimSent - LEASE);
      expect(await late.done).toEqual({ outcome: "processed" });
      expect(ran).toBe(1);
      expect(await store.get("n-1")).toMatchObject({ state: "completed", owner: "first" });
    });
  });
}

/** The handle a transactional store hands the handler, as far as this suite uses it. */
export interface TransactionHandleForContract {
  query(text: string, values?: unknown[]): Promise<unknown>;
  release(): void;
}

/**
 * Fencing of the handler's transaction, for stores that claim in one (`claimsInTransaction`): the
 * handle works only while its claim is live, and never lets the handler end the transaction itself.
 * `probe` is a statement the handle can run in any transaction.
 */
export function transactionFencingContract(
  name: string,
  makeStore: MakeStore,
  probe: {
    statement: string;
    control: string[];
    /** The handle as the contract drives it, for a store whose handle is not a pg client (an ORM's). */
    handle?: (transaction: unknown) => TransactionHandleForContract;
  },
): void {
  describe(`${name}: the transaction handle is fenced by its claim`, () => {
    const claimIn = async (id: string) => {
      const store = await makeStore({});
      if (!claimsInTransaction(store)) throw new Error(`${name} does not claim in a transaction`);
      const claimed = await store.claimInTransaction({ id, fingerprint: "f", owner: `o-${id}`, leaseMs: LEASE });
      expect(claimed.result).toMatchObject({ status: "claimed" });
      const handle = probe.handle?.(claimed.transaction) ?? (claimed.transaction as TransactionHandleForContract);
      return { store, claimed, handle };
    };
    const codeOf = (work: Promise<unknown>) =>
      work.then(
        () => "ran",
        (err: { code?: unknown }) => err.code,
      );

    it("answers every query after commit with MW_TRANSACTION_CLOSED", async () => {
      const { store, claimed, handle } = await claimIn("fence-commit");
      expect(await codeOf(handle.query(probe.statement))).toBe("ran");
      await claimed.commit(answer);
      expect(await codeOf(handle.query(probe.statement))).toBe("MW_TRANSACTION_CLOSED");
      expect(await store.get("fence-commit")).toMatchObject({ state: "completed", answer });
      await store.close?.();
    });

    it("answers every query after rollback or detach with MW_TRANSACTION_CLOSED", async () => {
      const rolledBack = await claimIn("fence-rollback");
      await rolledBack.claimed.rollback("handler_failed");
      expect(await codeOf(rolledBack.handle.query(probe.statement))).toBe("MW_TRANSACTION_CLOSED");
      expect(await rolledBack.store.get("fence-rollback")).toMatchObject({ state: "failed" });
      const detached = await claimIn("fence-detach");
      await detached.claimed.detach();
      expect(await codeOf(detached.handle.query(probe.statement))).toBe("MW_TRANSACTION_CLOSED");
      expect(await detached.store.get("fence-detach")).toMatchObject({ state: "processing" });
      await rolledBack.store.close?.();
      await detached.store.close?.();
    });

    it("refuses transaction control with MW_TRANSACTION_CONTROL, ignores release(), and still commits", async () => {
      const { store, claimed, handle } = await claimIn("fence-control");
      for (const statement of probe.control)
        expect([statement, await codeOf(handle.query(statement))]).toEqual([statement, "MW_TRANSACTION_CONTROL"]);
      handle.release();
      expect(await codeOf(handle.query(probe.statement))).toBe("ran");
      // Until the commit, another delivery of the id finds it in progress.
      expect(
        await store.claim({ id: "fence-control", fingerprint: "f", owner: "other", leaseMs: LEASE }),
      ).toMatchObject({ status: "processing" });
      await claimed.commit(answer);
      expect(await store.get("fence-control")).toMatchObject({ state: "completed", answer });
      await store.close?.();
    });
  });
}
