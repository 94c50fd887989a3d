import { PgBossQueueNotFoundError, redrive } from "../../pg-boss/redrive.js";
import { type CliIo, EXIT_NOT_PROCESSED, EXIT_OK } from "../args.js";
import { closeBoss, describeDatabase, openBoss } from "../pg-boss-connection.js";
import { printable } from "../printable.js";

export interface PgBossRedriveArgs {
  url: string;
  queue: string;
  schema?: string | undefined;
  deadLetter?: string | undefined;
  ids?: string[] | undefined;
  dryRun: boolean;
}

/** `redrive --pg-boss <url>`: a PgBoss of its own on the merchant's database (`openBoss`), then stopped. */
export async function redrivePgBoss(args: PgBossRedriveArgs, io: CliIo): Promise<number> {
  const where = describeDatabase(args.url);
  let boss: Awaited<ReturnType<typeof openBoss>>;
  try {
    boss = await openBoss(args.url, args.schema);
  } catch {
    io.err("redrive --pg-boss needs the pg-boss package: npm install pg-boss\n");
    return EXIT_NOT_PROCESSED;
  }
  try {
    await boss.start();
    const result = await redrive({
      boss,
      name: args.queue,
      ...(args.schema ? { schema: args.schema } : {}),
      ...(args.deadLetter ? { deadLetter: args.deadLetter } : {}),
      ...(args.ids ? { ids: args.ids } : {}),
      dryRun: args.dryRun,
    });
    for (const id of result.redriven) io.out(`${args.dryRun ? "would redrive" : "redriven"}: ${printable(id)}\n`);
    for (const id of result.notFailed) io.err(`not in the dead-letter queue: ${printable(id)}\n`);
    io.out(
      `${result.redriven.length} ${args.dryRun ? "would be redriven" : "redriven"} from pg-boss queue ${printable(args.queue)}\n`,
    );
    return result.notFailed.length > 0 ? EXIT_NOT_PROCESSED : EXIT_OK;
  } catch (err) {
    if (err instanceof PgBossQueueNotFoundError) {
      const found = err.found.filter((name) => !name.startsWith("__pgboss"));
      io.err(
        `no pg-boss queue ${printable(err.queue)} on ${where}${found.length ? `. Queues found:\n${found.map((name) => `  ${printable(name)}`).join("\n")}` : ", and no other queue either"}\n`,
      );
    } else io.err(`redrive failed on ${where}: ${printable((err as Error).message)}\n`);
    return EXIT_NOT_PROCESSED;
  } finally {
    await closeBoss(boss);
  }
}
