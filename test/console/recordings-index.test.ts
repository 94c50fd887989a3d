import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { createReceiver, jsonlRecorder, memoryStore } from "merchant-webhooks";
import { createAdmin, jsonlRecordings } from "merchant-webhooks/console";
import { afterAll, describe, expect, it } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { json, notification } from "../support/notifications.js";

/** Bytes this process has read through read(2) and the like, all files and pipes together (Linux). */
const bytesRead = () => Number(/rchar:\s+(\d+)/.exec(readFileSync("/proc/self/io", "utf8"))![1]);

// A list page over `jsonlRecordings` read every day's file, whole and synchronously, once per listed
// row: with 21.6 MB of recordings, one overview page stalled the process for 47 s. The recordings are
// now indexed once, streamed, and a list row reads none of them.

describe("jsonlRecordings under a list page", () => {
  const dir = mkdtempSync(join(tmpdir(), "mw-recordings-index-"));
  const store = memoryStore();
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("lists 50 rows with one streamed pass over 8 MB of recordings, none per row, the loop never held long", async () => {
    const recorder = jsonlRecorder({ dir });
    const receiver = createReceiver({
      logger: silentLogger(),
      idempotency: store,
      record: recorder,
      onRenew: () => {},
    });
    const ids: string[] = [];
    for (let i = 0; i < 50; i++) {
      const body = notification("SUBSCRIPTION_RENEW", `rec-index-${i}-${Date.now()}`);
      body.resource.id = `SUB-INDEX-${i}`;
      ids.push(body.id);
      expect((await receiver.handle({ method: "POST", headers: {}, rawBody: json(body) })).status).toBe(200);
    }
    await receiver.close();
    await recorder.close();
    // A busy day: about 8 MB of other notifications' recordings in the same file, which the list must not read per row.
    const [today] = readdirSync(dir);
    const line = readFileSync(join(dir, today!), "utf8").split("\n")[0]!;
    const padding: string[] = [];
    for (let i = 0; padding.length * line.length < 8 * 1024 * 1024; i++)
      padding.push(line.replace(ids[0]!, `other-${i}`));
    appendFileSync(join(dir, today!), `${padding.join("\n")}\n`);
    appendFileSync(join(dir, "notifications-2020-01-01.jsonl"), `${padding.slice(0, 100).join("\n")}\n`);
    const folder = padding.join("\n").length;

    const admin = createAdmin({ idempotency: store, recorder: jsonlRecordings({ dir }) });
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    const before = bytesRead();
    const first = await admin.listNotifications({ limit: 50 });
    const afterFirst = bytesRead();
    const second = await admin.listNotifications({ limit: 50 });
    const afterSecond = bytesRead();
    delay.disable();

    expect(first.items).toHaveLength(50);
    expect(first.items.every((item) => item.eventType === "SUBSCRIPTION_RENEW")).toBe(true);
    expect(new Set(first.items.map((item) => item.subscriptionId))).toEqual(
      new Set(ids.map((_, i) => `SUB-INDEX-${i}`)),
    );
    expect(second.items).toEqual(first.items);
    // The first page indexes the folder once (the old code read it 50 times); the next reads none of it.
    expect(afterFirst - before).toBeLessThan(2 * folder);
    expect(afterSecond - afterFirst).toBeLessThan(folder / 10);
    // Streamed in chunks: no block near a whole file's parse (a generous bound; the old code held it per row).
    expect(delay.max / 1e6).toBeLessThan(2_000);

    // A notification's page reads its own line, and a recording appended since is found.
    const detail = await admin.getNotification(ids[7]!);
    expect(detail?.recording?.notification.id).toBe(ids[7]);
    const late = notification("SUBSCRIPTION_RENEW", `rec-index-late-${Date.now()}`);
    appendFileSync(join(dir, today!), `${line.replace(ids[0]!, late.id)}\n`);
    expect((await jsonlRecordings({ dir }).find(late.id))?.notification.id).toBe(late.id);
    const fresh = jsonlRecordings({ dir });
    expect(await fresh.find("no-such-id")).toBeUndefined();
  }, 120_000);
});
