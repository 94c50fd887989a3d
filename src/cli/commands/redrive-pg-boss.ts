import { PgBossQueueNotFoundError, pgBossDeadLetters } from "../../pg-boss/redrive.js";
import { closeBoss, describeDatabase, openBoss } from "../pg-boss-connection.js";
import { printable } from "../printable.js";
import { cannotRedrive, type RedriveTransport } from "./redrive-transport.js";

export interface PgBossRedriveArgs {
  url: string;
  queue: string;
  schema?: string | undefined;
  deadLetter?: string | undefined;
  dryRun: boolean;
}

/** `redrive --pg-boss <url>`: a PgBoss of its own on the merchant's database (`openBoss`), then stopped. */
export function pgBossTransport(args: PgBossRedriveArgs): RedriveTransport {
  let boss: Awaited<ReturnType<typeof openBoss>> | undefined;
  return {
    async open() {
      try {
        boss = await openBoss(args.url, args.schema);
      } catch {
        return "redrive --pg-boss needs the pg-boss package: npm install pg-boss\n";
      }
      await boss.start();
      try {
        return await pgBossDeadLetters({
          boss,
          name: args.queue,
          ...(args.schema ? { schema: args.schema } : {}),
          ...(args.deadLetter ? { deadLetter: args.deadLetter } : {}),
          dryRun: args.dryRun,
        });
      } catch (err) {
        if (!(err instanceof PgBossQueueNotFoundError)) throw err;
        const found = err.found.filter((name) => !name.startsWith("__pgboss"));
        return `no pg-boss queue ${printable(err.queue)} on ${describeDatabase(args.url)}${found.length ? `. Queues found:\n${found.map((name) => `  ${printable(name)}`).join("\n")}` : ", and no other queue either"}\n`;
      }
    },
    close: async () => {
      if (boss) await closeBoss(boss);
    },
    where: () => describeDatabase(args.url),
    notFound: async (id) => `not in the dead-letter queue: ${printable(id)}\n`,
    refused: (id, reason) => cannotRedrive(printable(id), printable(reason)),
    summary: (count, dryRun) =>
      `${count} ${dryRun ? "would be redriven" : "redriven"} from pg-boss queue ${printable(args.queue)}\n`,
  };
}
