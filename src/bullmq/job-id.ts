import { createHash } from "node:crypto";

/** Ids that can be used as they are: BullMQ rejects ':' (its key separator) and all-digit ids. */
const READABLE = /^[A-Za-z0-9._~-]{1,128}$/;

/**
 * The BullMQ job id of a notification. One notification id always gives the same job id, so adding a
 * notification that is already in the queue is a no-op. Ids that are safe as they are stay readable
 * in dashboards (`id-<notification id>`); any other id is hashed (`h-<sha256 hex>`). The two prefixes
 * differ, so the two forms never collide.
 */
export function jobIdFor(notificationId: string): string {
  if (READABLE.test(notificationId)) return `id-${notificationId}`;
  return `h-${createHash("sha256").update(notificationId).digest("hex")}`;
}

/** A BullMQ queue as its keys name it, `prefix:name`: what a lane's data says it was appended for. */
export const queueIdentity = (queue: { name: string; opts: { prefix?: string | undefined } }): string =>
  `${queue.opts.prefix ?? "bull"}:${queue.name}`;
