import { Redis } from "ioredis";
import type { IdempotencyStore } from "merchant-webhooks";
import { createWorker } from "merchant-webhooks/bullmq";
import type { Admin, NotificationSummary } from "merchant-webhooks/console";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { json, notification } from "../support/notifications.js";
import { eventually, REDIS_URL, removeKeys, sleep, uniquePrefix } from "../support/redis.js";
import { consoleRig } from "./rig.js";

const post = (body: Uint8Array) => ({ method: "POST", headers: { "content-type": "application/json" }, rawBody: body });

export interface ConsoleBackend {
  store: IdempotencyStore;
  cleanup(): Promise<void>;
}

const TOTAL = 1_000;
const SUBSCRIPTIONS = 10;

/** Every page of a listing, with how often each id came back. */
async function allPages(admin: Admin, filter: Parameters<Admin["listNotifications"]>[0] = {}) {
  const items: NotificationSummary[] = [];
  let cursor: string | undefined;
  do {
    const page = await admin.listNotifications({ ...filter, ...(cursor ? { cursor } : {}) });
    items.push(...page.items);
    cursor = page.cursor;
  } while (cursor);
  return items;
}

const ids = (items: NotificationSummary[]) => items.map((item) => item.id).sort();

/**
 * The admin API against one store: 1,000 notifications of ten subscriptions, in order, through a
 * receiver, a BullMQ queue and a worker on that store; every tenth fails until "fixed".
 */
export function adminContract(label: string, backend: () => Promise<ConsoleBackend>): void {
  describe(`the admin API on ${label}`, () => {
    const prefix = uniquePrefix(`console-${label}`);
    const redis = new Redis(REDIS_URL);
    const runs = new Map<string, number>();
    const failing = new Set<string>();
    const failedAtFirst = new Set<string>();
    const sent: Array<{ id: string; eventType: string; subscription: string }> = [];
    let setup: ConsoleBackend;
    let admin: Admin;
    let stop: () => Promise<void>;

    // Handlers wait until the first test has listed some notifications unsettled, so it lists while
    // they run however fast the machine drains 1,000.
    let releaseHandlers = () => {};
    const listedWhileRunning = new Promise<void>((resolve) => (releaseHandlers = resolve));
    const handler = async (n: { id: string }) => {
      await listedWhileRunning;
      runs.set(n.id, (runs.get(n.id) ?? 0) + 1);
      if (failing.has(n.id)) throw new Error("ledger refused");
    };

    beforeAll(async () => {
      setup = await backend();
      const store = setup.store;
      const rig = consoleRig(store, { name: "console", prefix });
      const { queue, receiver } = rig;
      const worker = createWorker({
        connection: REDIS_URL,
        name: "console",
        prefix,
        idempotency: store,
        logger: silentLogger(),
        concurrency: 8,
        onRenew: handler,
        onCancel: handler,
      });
      admin = rig.admin;
      stop = async () => {
        await worker.close({ timeoutMs: 5_000 });
        await receiver.close();
        await queue.close();
      };
      // Sent in the background: the first test lists while they are received and processed.
      void (async () => {
        for (let i = 0; i < TOTAL; i += 50) {
          await Promise.all(
            Array.from({ length: 50 }, async (_, j) => {
              const n = i + j;
              const eventType = n % 3 === 0 ? "SUBSCRIPTION_CANCELLED" : "SUBSCRIPTION_RENEW";
              const body = notification(eventType, `cons-${label}-${n}`);
              // A failing one has its own subscription: redriven after newer ones of a shared
              // subscription completed, it would be stale and settled without its handler.
              body.resource.id = n % 10 === 7 ? `SUB-F-${n}` : `SUB-${n % SUBSCRIPTIONS}`;
              // Positions rise with n, so no notification is stale.
              body.resource.update_time = new Date(Date.UTC(2026, 10, 1) + n * 1000).toISOString();
              if (n % 10 === 7) {
                failing.add(body.id);
                failedAtFirst.add(body.id);
              }
              sent.push({ id: body.id, eventType, subscription: body.resource.id });
              // A sender sends again what was not processed: 409 while its subscription's row is held
              // by a worker's transaction (PostgreSQL), 503 past a store call's limit on a loaded machine.
              let answer = await receiver.handle(post(json(body)));
              for (let tries = 1; (answer.status === 409 || answer.status === 503) && tries < 100; tries++) {
                await sleep(100);
                answer = await receiver.handle(post(json(body)));
              }
              if (answer.status !== 200) throw new Error(`delivery of ${body.id} answered ${answer.status}`);
            }),
          );
        }
      })();
    }, 60_000);

    afterAll(async () => {
      releaseHandlers();
      await stop?.();
      await removeKeys(redis, prefix);
      redis.disconnect();
      await setup?.cleanup();
    });

    const settled = async () =>
      (await allPages(admin, { limit: 1_000 })).filter((item) => item.state === "completed" || item.state === "failed")
        .length === TOTAL;

    it("lists, filters and pages while 1,000 notifications are being processed", async () => {
      let passes = 0;
      let sawUnsettled = false;
      const deadline = Date.now() + 90_000;
      // While they arrive and run: a pass never shows an id twice, and never one that was not sent.
      while (!(await settled())) {
        const pass = await allPages(admin, { limit: 97 });
        expect(new Set(ids(pass)).size).toBe(pass.length);
        const known = new Set(sent.map((s) => s.id));
        expect(pass.every((item) => known.has(item.id))).toBe(true);
        if (pass.some((item) => item.state === "queued" || item.state === "processing")) {
          sawUnsettled = true;
          releaseHandlers();
        }
        passes++;
        if (Date.now() > deadline) {
          const states = new Map<string, number>();
          for (const item of pass) states.set(item.state, (states.get(item.state) ?? 0) + 1);
          const stuck = pass.filter((item) => item.state !== "completed" && item.state !== "failed").slice(0, 3);
          throw new Error(
            `the notifications did not settle in 90 s (${passes} passes; ${sent.length} sent; ${JSON.stringify([...states])}; ${JSON.stringify(stuck)})`,
          );
        }
        await sleep(100);
      }
      expect(sawUnsettled).toBe(true);

      const all = await allPages(admin, { limit: 97 });
      expect(ids(all)).toEqual(sent.map((s) => s.id).sort());
      // Newest first, across page boundaries.
      for (let i = 1; i < all.length; i++) expect(all[i - 1]!.updatedAt).toBeGreaterThanOrEqual(all[i]!.updatedAt);
      expect(ids(await allPages(admin, { state: "failed", limit: 33 }))).toEqual([...failing].sort());
      const cancels = sent.filter((s) => s.eventType === "SUBSCRIPTION_CANCELLED").map((s) => s.id);
      expect(ids(await allPages(admin, { eventType: "SUBSCRIPTION_CANCELLED", limit: 50 }))).toEqual(cancels.sort());
      const third = sent.filter((s) => s.subscription === "SUB-3").map((s) => s.id);
      const bySubscription = await allPages(admin, { subscriptionId: "SUB-3", limit: 40 });
      expect(ids(bySubscription)).toEqual(third.sort());
      expect(bySubscription.every((item) => item.orderKey === "M100200300:SUB-3")).toBe(true);
      const failedItem = all.find((item) => item.state === "failed")!;
      expect(failedItem).toMatchObject({ subscriptionId: expect.stringMatching(/^SUB-/) });
      expect(failedItem.attempts).toBeGreaterThan(0);
      // A time window: nothing changed after `until`.
      const middle = all[Math.floor(all.length / 2)]!.updatedAt;
      const older = await allPages(admin, { until: middle, limit: 200 });
      expect(older.length).toBeGreaterThan(0);
      expect(older.every((item) => item.updatedAt <= middle)).toBe(true);
    }, 120_000);

    it("shows one notification's record, ordering, job and recording, redacted", async () => {
      const id = [...failing][0]!;
      const detail = (await admin.getNotification(id))!;
      expect(detail.record).toMatchObject({ state: "failed" });
      expect(detail.eventType).toMatch(/^SUBSCRIPTION_/);
      expect(detail.ordering?.key).toMatch(/^M100200300:SUB-/);
      expect(detail.job).toMatchObject({ state: "failed", sealed: false });
      // The handler's error text may quote the payload: only the record's own reason is shown.
      expect(JSON.stringify(detail)).not.toContain("ledger refused");
      expect(detail.recording?.answer).toMatchObject({ status: 200, processed: true });
      expect(detail.timeline.map((event) => event.what)).toEqual(
        expect.arrayContaining(["received", "queued", "failed"]),
      );
      const text = JSON.stringify(detail);
      expect(text).not.toMatch(/"cvc"\s*:\s*"\d/);
      expect(await admin.getNotification("no-such-notification")).toBeUndefined();
    });

    it("redrives by filter exactly its matches, counted first by a dry run", async () => {
      const failedCancels = sent.filter((s) => failing.has(s.id) && s.eventType === "SUBSCRIPTION_CANCELLED");
      const failedRenews = sent.filter((s) => failing.has(s.id) && s.eventType === "SUBSCRIPTION_RENEW");
      expect(failedCancels.length).toBeGreaterThan(0);
      const filter = { state: "failed" as const, eventType: "SUBSCRIPTION_CANCELLED" };
      const dry = await admin.redrive({ filter, dryRun: true });
      expect(dry).toMatchObject({ matched: failedCancels.length, redriven: 0 });
      expect(dry.ids.sort()).toEqual(failedCancels.map((s) => s.id).sort());
      const before = new Map(runs);
      await sleep(300);
      // The dry run moved nothing.
      for (const { id } of failedCancels) expect(runs.get(id)).toBe(before.get(id));

      const attemptsBefore = new Map<string, number>();
      for (const { id } of failedCancels) attemptsBefore.set(id, (await admin.getNotification(id))!.record!.attempts);
      failing.clear();
      const done = await admin.redrive({ filter });
      expect(done).toMatchObject({ matched: failedCancels.length, redriven: failedCancels.length });
      const redriven = new Set(failedCancels.map((s) => s.id));
      await eventually(
        async () =>
          (await allPages(admin, { state: "completed", limit: 1_000 })).filter((item) => redriven.has(item.id))
            .length === redriven.size,
        30_000,
        "the redriven notifications to complete",
      );
      for (const { id } of failedCancels) {
        const detail = (await admin.getNotification(id))!;
        expect(detail.record?.state).toBe("completed");
        expect(runs.get(id)).toBe(before.get(id)! + 1);
        // The failure it was redriven after stays in its timeline, before its completion.
        const whats = detail.timeline.map((event) => `${event.what}${event.detail?.includes("redriven") ? "*" : ""}`);
        expect(whats.indexOf("failed*")).toBeGreaterThanOrEqual(0);
        expect(whats.indexOf("failed*")).toBeLessThan(whats.indexOf("completed"));
        const attempts = attemptsBefore.get(id)!;
        expect(detail.timeline.find((event) => event.what === "failed")?.detail).toBe(
          `${attempts} attempt${attempts === 1 ? "" : "s"}; handler_failed (then redriven)`,
        );
      }
      for (const { id } of failedRenews) {
        expect((await admin.getNotification(id))!.record?.state).toBe("failed");
        expect(runs.get(id)).toBe(before.get(id));
      }
    }, 60_000);

    it("replays a completed id through the claim and runs no handler", async () => {
      const completed = sent.find((s) => !failedAtFirst.has(s.id))!;
      await eventually(async () => (await admin.getNotification(completed.id))?.record?.state === "completed");
      const before = runs.get(completed.id);
      const result = await admin.replay(completed.id);
      expect(result.status).toBe("completed");
      expect(result.message).toMatch(/^already processed/);
      await sleep(500);
      expect(runs.get(completed.id)).toBe(before);
    });

    it("replays a dead letter whose job is gone from its recording, in its subscription's order", async () => {
      const failed = (await allPages(admin, { state: "failed", limit: 500 }))[0]!;
      // The dead letter's job removed by hand: only the recording is left to run it from.
      const job = await (await import("bullmq")).Job.fromId(
        new (await import("bullmq")).Queue("console", { connection: redis, prefix }),
        `id-${failed.id}`,
      );
      await job?.remove();
      const before = runs.get(failed.id)!;
      const result = await admin.replay(failed.id);
      expect(result).toMatchObject({ status: "queued" });
      await eventually(
        async () => (await admin.getNotification(failed.id))?.record?.state === "completed",
        20_000,
        "the replayed notification to complete",
      ).catch(async (err) => {
        console.log(JSON.stringify(await admin.getNotification(failed.id), null, 1));
        throw err;
      });
      expect(runs.get(failed.id)).toBe(before + 1);
    });

    it("discards a dead letter with its reason kept, and a redelivery runs nothing", async () => {
      const failed = (await allPages(admin, { state: "failed", limit: 500 }))[0]!;
      const before = runs.get(failed.id);
      const result = await admin.discard(failed.id, { reason: "refunded by hand, ticket OPS-12" });
      expect(result).toMatchObject({ discarded: true });
      const detail = (await admin.getNotification(failed.id))!;
      expect(detail.record).toMatchObject({
        state: "completed",
        outcome: "discarded by hand: refunded by hand, ticket OPS-12",
      });
      expect(detail.job).toBeUndefined();
      expect((await admin.redrive({ ids: [failed.id] })).redriven).toBe(0);
      await sleep(300);
      expect(runs.get(failed.id)).toBe(before);
      await expect(admin.discard(failed.id, { reason: "" })).rejects.toMatchObject({ code: "MW_ADMIN_BAD_FILTER" });
    });

    it("finds a lane's records by their subscription, whatever is known of each", async () => {
      // Dead letters of one subscription with neither job nor recording (as a lane's waiters may be):
      // only their order key tells their subscription.
      const lane = Array.from({ length: 4 }, (_, i) => `lane-${label}-${process.pid}-${i}`);
      for (const id of lane) {
        const claim = await setup.store.claim({
          id,
          fingerprint: `fp-${id}`,
          owner: `owner-${id}`,
          leaseMs: 30_000,
          order: { key: "M100200300:SUB-LANE" },
        });
        expect(claim.status).toBe("claimed");
        expect(await setup.store.fail(claim as { id: string; owner: string }, "handler_failed")).toBe(true);
      }
      const found = await allPages(admin, { subscriptionId: "SUB-LANE" });
      expect(ids(found)).toEqual([...lane].sort());
      expect(found.every((item) => item.subscriptionId === "SUB-LANE")).toBe(true);
      expect((await admin.redrive({ filter: { subscriptionId: "SUB-LANE" }, dryRun: true })).matched).toBe(4);
      expect((await admin.getNotification(lane[0]!))?.subscriptionId).toBe("SUB-LANE");
    });
  });
}
