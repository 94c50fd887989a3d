import type { DeadLetterJobs } from "../../queue/queue-jobs.js";

/**
 * Where `merchant-webhooks redrive` finds its dead letters, as the flags choose it: a BullMQ queue
 * (`--queue`), a pg-boss one (`--pg-boss`) or a store's kept notifications (`--in-process`). The
 * redrive itself (ids, order, dry run, output, exit status) is `runRedrive`'s, the same for each.
 */
export interface RedriveTransport {
  /** The dead letters; or, as text, why there are none to redrive (no queue of that name, a peer missing). */
  open(): Promise<DeadLetterJobs | string>;
  close(): Promise<void>;
  /** Where the dead letters are, for the message of a failure. */
  where(): string;
  /** The line for an id asked for that is no dead letter there. */
  notFound(id: string): Promise<string>;
  /** The line for a dead letter left where it is, with why. */
  refused(id: string, reason: string): string;
  /** The closing line(s): how many went back (or would). */
  summary(count: number, dryRun: boolean): string;
}

/** The line for a dead letter whose data was lost before it ran. */
export const cannotRedrive = (id: string, reason: string): string =>
  `cannot redrive ${id}: ${reason}; replay it from a recording in the console, or discard it\n`;
