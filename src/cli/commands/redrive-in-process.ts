import { adminParts } from "../../console/admin.js";
import type { DeadLetter } from "../../queue/queue-jobs.js";
import { type KeepingStore, keepsNotifications } from "../../receiver/resume-lapsed.js";
import { printable } from "../printable.js";
import { type StoreValues, storeSource } from "../store-source.js";
import type { RedriveTransport } from "./redrive-transport.js";

/** Records read, and checked for kept data, per page. */
const PAGE = 1_000;

/**
 * `redrive --in-process`: the dead letters an in-process queue left on a store that kept their
 * notifications (`IdempotencyStore.kept`) are marked to run again, each as the admin API's redrive
 * (the console's) marks one, and a receiver on the store runs each on its next sweep. Failed records
 * without kept data are no dead letters of the store's: their sender delivers them again, or a
 * durable queue holds them. Loads its store's peer only: pg for --postgres, else ioredis.
 */
export function inProcessTransport(values: StoreValues): RedriveTransport {
  const source = storeSource(values);
  let store: KeepingStore | undefined;
  /** Failed records without kept data, when every dead letter was listed. */
  let notKept = 0;
  return {
    async open() {
      const opened = await source.store();
      // redisStore (with its time index, the default) and postgresStore keep them, and list their records.
      if (!keepsNotifications(opened))
        return `the store on ${source.where()} keeps no in-process queue's notifications: nothing to redrive\n`;
      store = opened;
      const { redrive, settled } = adminParts({ idempotency: opened }).redrive;
      return {
        async deadLetters(ids) {
          const records = ids ? undefined : await failedRecords(opened);
          const asked = ids ?? records!.map((record) => record.id);
          const letters: DeadLetter[] = [];
          // A page at a time: each check is a round trip, kept within the store's call limit.
          for (let at = 0; at < asked.length; at += PAGE) {
            const page = asked.slice(at, at + PAGE);
            const kept = await Promise.all(page.map((id) => opened.kept.redrivable(id)));
            page.forEach((id, i) => {
              if (kept[i]) letters.push({ id, order: records ? records[at + i]!.order : undefined });
            });
          }
          if (records) notKept = records.length - letters.length;
          // The lane of each asked for by id, as its record was claimed.
          else for (const letter of letters) letter.order = await orderOf(opened, letter.id);
          return letters;
        },
        redrive,
        ...(settled ? { settled } : {}),
      };
    },
    close: () => source.close(),
    where: () => source.where(),
    notFound: async (id) => `not redriven: ${printable(id)}: ${printable(await whyNot(store!, id))}\n`,
    refused: (id, reason) => `not redriven: ${printable(id)}: ${printable(reason)}\n`,
    summary(count, dryRun) {
      const done = `${count} ${dryRun ? "would be redriven" : "redriven"} from the store on ${source.where()}`;
      const lines = [
        dryRun || count === 0
          ? done
          : `${done}; a receiver with an in-process queue on it runs each within half a lease`,
      ];
      if (notKept > 0)
        lines.push(
          `${notKept} ${notKept === 1 ? "failed record" : "failed records"} without kept data not redriven: a receiver answered processed: false for them, so their sender delivers them again (or a durable queue holds them: redrive --queue or --pg-boss)`,
        );
      return `${lines.join("\n")}\n`;
    },
  };
}

/** Every failed record, the oldest failure first (the store lists the most recent first). */
async function failedRecords(store: KeepingStore) {
  const records = [];
  let cursor: string | undefined;
  do {
    const page = await store.list({ state: "failed", limit: PAGE, ...(cursor ? { cursor } : {}) });
    records.push(...page.items);
    cursor = page.cursor;
  } while (cursor);
  return records.reverse();
}

const orderOf = async (store: KeepingStore, id: string) => (await store.list({ id, limit: 1 })).items[0]?.order;

/** Why an id asked for is no dead letter the store kept, in a person's words. */
async function whyNot(store: KeepingStore, id: string): Promise<string> {
  const [record] = (await store.list({ id, limit: 1 })).items;
  if (!record) return "no record of it in the store";
  if (record.state === "completed") return "already completed";
  if (record.state !== "failed") return `it is ${record.state}, not a dead letter`;
  return "the store kept no data of it: its receiver answered processed: false, so its sender delivers it again, or a durable queue holds it (redrive --queue or --pg-boss)";
}
