import { hashTagOf } from "../../bullmq/cluster-prefix.js";
import { openDeadLetters, QueueNotFoundError } from "../../bullmq/redrive.js";
import { closeClient } from "../../redis/connect.js";
import { UsageError } from "../args.js";
import { printable } from "../printable.js";
import { connectTarget, describeTarget, redisTarget } from "../redis-target.js";
import { cannotRedrive, type RedriveTransport } from "./redrive-transport.js";

export interface BullmqRedriveArgs {
  queue: string;
  redis?: string[] | undefined;
  cluster: boolean;
  prefix?: string | undefined;
}

/**
 * `redrive --queue` on BullMQ: its failed set on Redis (a Redis Cluster too). Loaded once the command
 * runs, with ioredis and bullmq, so `--help` and a pg-boss user need neither.
 */
export function bullmqTransport(args: BullmqRedriveArgs): RedriveTransport {
  if (args.queue.includes(":")) throw new UsageError(`--queue cannot contain ":", got ${args.queue}`);
  const target = redisTarget(args.redis, args.cluster);
  // BullMQ's scripts touch several keys of a queue at once: on a cluster they must share a slot.
  if (target.cluster && hashTagOf(`${args.prefix ?? "bull"}:${args.queue}:`) === undefined)
    throw new UsageError(
      `on a Redis Cluster a queue's keys need a hash tag in --prefix, the one given to bullmqQueue, such as --prefix "{mw}"`,
    );
  const client = connectTarget(target);
  client.on("error", () => {}); // failures reach the calls below, and are reported once there
  let close = async () => {};
  return {
    async open() {
      try {
        const opened = await openDeadLetters({
          connection: client,
          name: args.queue,
          ...(args.prefix ? { prefix: args.prefix } : {}),
          requireQueue: true,
        });
        close = opened.close;
        return opened.jobs;
      } catch (err) {
        if (err instanceof QueueNotFoundError) return notFoundText(err, describeTarget(target));
        throw err;
      }
    },
    async close() {
      await close();
      await closeClient(client);
    },
    where: () => describeTarget(target),
    notFound: async (id) => `not in the failed set: ${printable(id)}\n`,
    refused: (id, reason) => cannotRedrive(printable(id), printable(reason)),
    summary: (count, dryRun) =>
      `${count} ${dryRun ? "would be redriven" : "redriven"} from queue ${printable(args.queue)}\n`,
  };
}

/** The queue asked for is not there: say so, and list what is, with the --prefix each needs. */
function notFoundText(err: QueueNotFoundError, where: string): string {
  const asked = `no queue ${printable(err.queue.name)} with prefix ${printable(err.queue.prefix)} on ${where}`;
  if (err.found.length === 0) return `${asked}, and no other BullMQ queue either\n`;
  const list = err.found.map(
    (q) => `  ${printable(q.name)}${q.prefix === "bull" ? "" : `  --prefix ${printable(q.prefix)}`}`,
  );
  return `${asked}. Queues found:\n${list.join("\n")}\n`;
}
