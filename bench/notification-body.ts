import { buildNotification } from "merchant-webhooks/testing";

/**
 * The notification every benchmark sends: a renewal as `buildNotification` makes it (about 2.2 KB of
 * compact JSON, as a sender puts it on the wire), with the envelope id swapped per request.
 */
const renewal = JSON.stringify(buildNotification("SUBSCRIPTION_RENEW"));
const idStart = renewal.indexOf('"id":"');
const head = renewal.slice(0, idStart);
const tail = renewal.slice(renewal.indexOf('"', idStart + 6) + 1);

/** The body with this envelope id. */
export const notificationText = (id: string): string => `${head}"id":"${id}"${tail}`;

/** The body with autocannon's `[<id>]` placeholder, replaced by a unique id per request. */
export const autocannonTemplate = notificationText("[<id>]");
