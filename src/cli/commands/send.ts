import { eventNamesList, eventTypeNamed } from "../../schema/event-names.js";
import { buildNotification } from "../../testing/build-notification.js";
import { replayEntries } from "../../testing/replay.js";
import type { CliIo } from "../args.js";
import {
  EXIT_NOT_PROCESSED,
  EXIT_OK,
  parseCommand,
  processIo,
  reportUsageError,
  SENDING_OPTIONS,
  SENDING_USAGE,
  sendingSetup,
  UsageError,
} from "../args.js";
import { printable } from "../printable.js";
import { setPath } from "../set-path.js";
import { isProcessed } from "../summary-table.js";

export const SEND_USAGE = `Usage: merchant-webhooks send <event> --url <url> [options]

Build one valid notification of <event> (as buildNotification does, with a fresh id) and send it.
<event> is an event_type or one of its names, in any case:
${eventNamesList()}
  UNKNOWN                  unknown, onUnknown
or any other upper-case event_type, which a receiver hands to onUnknown.

Options:
${SENDING_USAGE}
      --set <path=value>         set a field before sending; repeat for several. The value is read
                                 as JSON when it parses (numbers, true, null, objects), except that a
                                 field holding a string keeps the text as a string
      --print                    print the notification instead of sending it (no --url needed)
  -h, --help                     show this help

Exit status: 0 when the answer is processed, 1 when it is not or no answer came, 2 on a usage error.

Examples:
  merchant-webhooks send renew --url http://localhost:3000/hook
  merchant-webhooks send SUBSCRIPTION_CANCELLED --url http://localhost:3000/hook \\
    --set resource.subscriber.email=a@b.co --set resource.unsubscription_event.reason="too expensive"
`;

/** `cancel`, `cancelled`, `onCancel`, `subscription_cancelled`... (see eventTypeNamed); `unknown`; or any upper-case type. */
function eventTypeOf(name: string): string {
  const known = eventTypeNamed(name);
  if (known) return known;
  if (/^(on)?unknown$/i.test(name)) return "UNKNOWN";
  if (/^[A-Z][A-Z0-9_]*$/.test(name)) return name;
  throw new UsageError(
    `unknown event "${name}": use one of these names (any case), or an upper-case event_type for onUnknown:\n${eventNamesList()}`,
  );
}

export async function runSend(argv: readonly string[], io: CliIo = processIo()): Promise<number> {
  let notification: Record<string, unknown>;
  let setup;
  try {
    const { values, positionals } = parseCommand(argv, {
      ...SENDING_OPTIONS,
      set: { type: "string", multiple: true },
      print: { type: "boolean" },
    });
    if (values.help) {
      io.out(SEND_USAGE);
      return EXIT_OK;
    }
    if (positionals.length !== 1) throw new UsageError("give one event to send");
    notification = buildNotification(eventTypeOf(positionals[0]!), undefined, { random: true });
    for (const assignment of values.set ?? []) {
      try {
        setPath(notification, assignment);
      } catch (err) {
        throw new UsageError(`--set ${assignment}: ${(err as Error).message}`);
      }
    }
    if (values.print) {
      io.out(`${JSON.stringify(notification, null, 2)}\n`);
      return EXIT_OK;
    }
    setup = sendingSetup(values);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    return reportUsageError(io, err, SEND_USAGE);
  }

  const [result] = await replayEntries(setup.url, [{ notification, origin: "send" }], {
    headers: setup.headers,
    timeoutMs: setup.timeoutMs,
    ...(setup.sign ? { sign: setup.sign } : {}),
  });
  const id = String(notification.id);
  if (!result || result.status === 0) {
    io.err(`${printable(`${id}: no answer: ${result?.error ?? "unknown error"}`)}\n`);
    return EXIT_NOT_PROCESSED;
  }
  const answer = result.answer ? JSON.stringify(result.answer) : "(not a webhook answer)";
  const line = `${printable(`${id} ${String(notification.event_type)}: ${result.status} ${answer}`)}\n`;
  if (!isProcessed(result)) {
    io.err(line);
    return EXIT_NOT_PROCESSED;
  }
  io.out(line);
  return EXIT_OK;
}
