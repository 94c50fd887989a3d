import { stat } from "node:fs/promises";
import { subscriptionNotificationSchema } from "../../schema/index.js";
import { issueText } from "../../schema/validation-message.js";
import { isSourceProblem, sourceItems } from "../../testing/read-source.js";
import {
  type CliIo,
  EXIT_NOT_PROCESSED,
  EXIT_OK,
  parseCommand,
  processIo,
  reportUsageError,
  UsageError,
} from "../args.js";
import { printable } from "../printable.js";

export const VALIDATE_USAGE = `Usage: merchant-webhooks validate <file|dir>...

Check notifications against the envelope schema the receiver applies, without sending anything.
Each file is a .json file (a notification or an array of them) or a .jsonl file (one notification or
recorded entry per line); a directory stands for the .json and .jsonl files in it. Every error is
printed as  file:line field.path: message.

Options:
  -h, --help   show this help

Exit status: 0 when every notification is valid, 1 when any is not (or is not JSON), 2 on a usage
error or a path that cannot be read.
`;

export async function runValidate(argv: readonly string[], io: CliIo = processIo()): Promise<number> {
  let paths: string[];
  try {
    const { values, positionals } = parseCommand(argv, {});
    if (values.help) {
      io.out(VALIDATE_USAGE);
      return EXIT_OK;
    }
    if (positionals.length === 0) throw new UsageError("give at least one file or directory to validate");
    paths = positionals;
    for (const path of paths)
      await stat(path).catch((err: NodeJS.ErrnoException) => {
        throw unreadable(path, err);
      });
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    return reportUsageError(io, err, VALIDATE_USAGE);
  }

  // Each notification is checked as it is read and then let go: a recording of millions of lines
  // takes the memory of one line.
  let checked = 0;
  let invalid = 0;
  try {
    for (const path of paths) {
      for await (const item of sourceItems(path)) {
        checked++;
        if (isSourceProblem(item)) {
          invalid++;
          io.out(`${printable(`${item.origin} ${item.error}`)}\n`);
          continue;
        }
        const result = subscriptionNotificationSchema.safeParse(item.notification);
        if (result.success) continue;
        invalid++;
        // The same wording as the receiver's 400 answer, so a file and a rejected delivery read alike.
        for (const issue of result.error.issues) io.out(`${printable(`${item.origin} ${issueText(issue)}`)}\n`);
      }
    }
  } catch (err) {
    if (!(err instanceof Error && "code" in err)) throw err;
    const failure = err as NodeJS.ErrnoException;
    return reportUsageError(io, unreadable(failure.path ?? "a file", failure), VALIDATE_USAGE);
  }
  const noun = checked === 1 ? "notification" : "notifications";
  io.out(`${checked} ${noun} checked, ${invalid} invalid\n`);
  return invalid === 0 ? EXIT_OK : EXIT_NOT_PROCESSED;
}

function unreadable(path: string, err: NodeJS.ErrnoException): UsageError {
  return new UsageError(err.code === "ENOENT" ? `no such file or directory: ${path}` : `${path}: ${err.message}`);
}
