import { z } from "zod";
import { type Check, compileJsonSchema } from "./compile-json-schema.js";
import { isWellFormedNotificationId, subscriptionNotificationSchema } from "./notification.js";

/**
 * The accept path's check of a notification, about three times cheaper than zod's `safeParse`: the
 * notification schema as `z.toJSONSchema` writes it (zod's own regular expressions included), compiled
 * once, on first use, into closures. It only says yes or no, and it is only ever trusted to say yes:
 * a body it refuses goes to zod, which decides and words the message. JSON Schema cannot carry a
 * refine, so the schema's one refine (a well-formed id) is checked here beside it.
 * test/schema/envelope-check-differential.test.ts shows both accept and refuse the same bodies.
 */
let check: Check | null | undefined;

export function passesEnvelopeCheck(body: Record<string, unknown>): boolean {
  if (check === undefined) check = compileEnvelopeCheck();
  if (check === null) return false;
  return check(body) && isWellFormedNotificationId(body.id as string);
}

/** Null when the schema holds something the compiler cannot follow: zod then checks every body. */
function compileEnvelopeCheck(): Check | null {
  try {
    return compileJsonSchema(z.toJSONSchema(subscriptionNotificationSchema, { io: "input" }));
  } catch {
    return null;
  }
}
