import { createAdmin } from "../../console/admin.js";
import { type KeepingStore, keepsNotifications } from "../../receiver/resume-lapsed.js";
import { type CliIo, EXIT_NOT_PROCESSED, EXIT_OK, UsageError } from "../args.js";
import { printable } from "../printable.js";
import { type StoreValues, storeSource } from "../store-source.js";

export interface InProcessRedriveArgs {
  store: StoreValues;
  ids?: string[] | undefined;
  dryRun: boolean;
}

/** Failed records read per page when no id is given. */
const PAGE = 1_000;

/**
 * `redrive --in-process`: the dead letters an in-process queue left on a store that kept their
 * notifications (`IdempotencyStore.kept`) are marked to run again, through the admin API's redrive (the
 * console's), and a receiver on the store runs each on its next sweep. Failed records without kept data
 * are no dead letters of the store's: their sender delivers them again, or a durable queue holds them.
 */
export async function redriveInProcess(args: InProcessRedriveArgs, io: CliIo): Promise<number> {
  const source = storeSource(args.store);
  try {
    const store = await source.store();
    // redisStore (with its time index, the default) and postgresStore keep them, and list their records.
    if (!keepsNotifications(store)) {
      io.err(`the store on ${source.where()} keeps no in-process queue's notifications: nothing to redrive\n`);
      return EXIT_NOT_PROCESSED;
    }
    const admin = createAdmin({ idempotency: store });
    const verb = args.dryRun ? "would redrive" : "redriven";
    let redriven = 0;
    let refused = 0;
    let notKept = 0;
    const asked = args.ids ? [...new Set(args.ids)] : await failedIds(store);
    // A page at a time: each check and redrive is a round trip, kept within the store's call limit.
    for (let at = 0; at < asked.length; at += PAGE) {
      const page = asked.slice(at, at + PAGE);
      const flags = await Promise.all(page.map((id) => store.kept.redrivable(id)));
      const ready = page.filter((_, i) => flags[i]);
      const skipped: Array<{ id: string; reason: string }> = [];
      for (const id of page.filter((_, i) => !flags[i])) {
        notKept++;
        if (args.ids) skipped.push({ id, reason: await whyNot(store, id) });
      }
      let done = ready;
      if (!args.dryRun && ready.length > 0) {
        // The admin's redrive, as the console's: oldest first in a subscription, each by `kept.rerun`.
        const result = await admin.redrive({ ids: ready });
        done = result.ids;
        skipped.push(...result.skipped);
      }
      for (const id of done) io.out(`${verb}: ${printable(id)}\n`);
      for (const { id, reason } of skipped) io.err(`not redriven: ${printable(id)}: ${printable(reason)}\n`);
      redriven += done.length;
      refused += skipped.length;
    }
    const count = `${redriven} ${args.dryRun ? "would be redriven" : "redriven"} from the store on ${source.where()}`;
    io.out(
      args.dryRun || redriven === 0
        ? `${count}\n`
        : `${count}; a receiver with an in-process queue on it runs each within half a lease\n`,
    );
    if (!args.ids && notKept > 0)
      io.out(
        `${notKept} ${notKept === 1 ? "failed record" : "failed records"} without kept data not redriven: a receiver answered processed: false for them, so their sender delivers them again (or a durable queue holds them: redrive --queue or --pg-boss)\n`,
      );
    return refused > 0 ? EXIT_NOT_PROCESSED : EXIT_OK;
  } catch (err) {
    // A bad --redis is a usage error; a peer not installed, named by the command line (npm install pg).
    if (err instanceof UsageError || (err as NodeJS.ErrnoException).code === "ERR_MODULE_NOT_FOUND") throw err;
    io.err(`redrive failed on ${source.where()}: ${printable((err as Error).message)}\n`);
    return EXIT_NOT_PROCESSED;
  } finally {
    await source.close();
  }
}

/** Every failed record's id, the oldest failure first (the store lists the most recent first). */
async function failedIds(store: KeepingStore): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.list({ state: "failed", limit: PAGE, ...(cursor ? { cursor } : {}) });
    for (const item of page.items) ids.push(item.id);
    cursor = page.cursor;
  } while (cursor);
  return ids.reverse();
}

/** Why an id asked for is no dead letter the store kept, in a person's words. */
async function whyNot(store: KeepingStore, id: string): Promise<string> {
  const [record] = (await store.list({ id, limit: 1 })).items;
  if (!record) return "no record of it in the store";
  if (record.state === "completed") return "already completed";
  if (record.state !== "failed") return `it is ${record.state}, not a dead letter`;
  return "the store kept no data of it: its receiver answered processed: false, so its sender delivers it again, or a durable queue holds it (redrive --queue or --pg-boss)";
}
