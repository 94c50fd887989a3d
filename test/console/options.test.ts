import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createReceiver, jsonlRecorder, memoryStore } from "merchant-webhooks";
import { consoleHandler, createAdmin } from "merchant-webhooks/console";
import { afterAll, describe, expect, it } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { json, notification } from "../support/notifications.js";

const post = (body: Uint8Array) => ({ method: "POST", headers: { "content-type": "application/json" }, rawBody: body });
const thrownBy = (call: () => unknown): unknown => {
  try {
    call();
  } catch (err) {
    return err;
  }
  return undefined;
};

describe("the console's options", () => {
  const dir = mkdtempSync(join(tmpdir(), "mw-console-options-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("refuses a misspelt basePath at construction, naming the right one, instead of serving broken links", () => {
    const admin = createAdmin({ idempotency: memoryStore() });
    const thrown = thrownBy(() => consoleHandler({ admin, authorize: () => true, basepath: "/ops" } as never));
    expect(thrown).toBeInstanceOf(TypeError);
    expect(thrown).toMatchObject({ code: "MW_UNKNOWN_OPTION", option: "basepath" });
    expect((thrown as Error).message).toContain('unknown option "basepath". Did you mean "basePath"?');
  });

  it("refuses an unknown createAdmin key with the nearest accepted one", () => {
    const thrown = thrownBy(() => createAdmin({ idempotency: memoryStore(), recordings: [] } as never));
    expect(thrown).toMatchObject({ code: "MW_UNKNOWN_OPTION", option: "recordings" });
    expect((thrown as Error).message).toContain('Did you mean "recorder"?');
  });

  it("reads a jsonlRecorder given as recorder back from its directory: the page shows the recording", async () => {
    const recorder = jsonlRecorder({ dir });
    const store = memoryStore();
    const receiver = createReceiver({ logger: silentLogger(), idempotency: store, record: recorder, onCreated() {} });
    const body = notification();
    expect((await receiver.handle(post(json(body)))).status).toBe(200);
    await recorder.close();

    const admin = createAdmin({ idempotency: store, recorder });
    expect((await admin.getNotification(body.id))?.recording?.notification).toMatchObject({ id: body.id });
    const handler = consoleHandler({ admin, authorize: () => true });
    const page = await handler(new Request(`http://console.test/console/notifications/${encodeURIComponent(body.id)}`));
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("<h3>Headers kept</h3>");
    await receiver.close();
  });

  it("refuses at construction a recorder that can only write, instead of a 500 on every page", () => {
    const thrown = thrownBy(() => createAdmin({ idempotency: memoryStore(), recorder: { write() {} } as never }));
    expect(thrown).toBeInstanceOf(TypeError);
    expect(thrown).toMatchObject({ code: "MW_INVALID_OPTION", option: "recorder" });
  });
});

describe("an invariant the admin relies on", () => {
  it("a discard whose claim comes back for another id fails with MW_INTERNAL and leaves it not completed", async () => {
    const store = memoryStore();
    const claimed = await store.claim({ id: "WH-failed", fingerprint: "f", owner: "worker", leaseMs: 30_000 });
    expect(claimed.status).toBe("claimed");
    await store.fail(claimed as never, "handler_failed");
    // A store that answers a claim for another id than asked: a bug there, never a caller's mistake.
    const confused = {
      ...store,
      claim: async (request: Parameters<typeof store.claim>[0]) => {
        const claim = await store.claim(request);
        return claim.status === "claimed" ? { ...claim, id: "WH-someone-else" } : claim;
      },
    };
    const admin = createAdmin({ idempotency: confused });
    const thrown = await admin.discard("WH-failed", { reason: "refunded by hand" }).catch((err: unknown) => err);
    expect(thrown).toBeInstanceOf(Error);
    expect(thrown).toMatchObject({
      code: "MW_INTERNAL",
      message: "discard claimed WH-someone-else instead of WH-failed",
    });
    // Not completed as discarded: a later delivery or redrive still runs it.
    expect((await store.get("WH-failed"))?.state).not.toBe("completed");
  });
});
