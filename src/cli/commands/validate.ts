import { subscriptionNotificationSchema } from "../../schema/index.js";
import { issueText } from "../../schema/validation-message.js";
import { isSourceProblem, readSourceItems, type SourceItem } from "../../testing/read-source.js";
import { EXIT_NOT_PROCESSED, EXIT_OK, EXIT_USAGE, parseCommand, processIo, UsageError, type CliIo } from "../args.js";

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
  const items: SourceItem[] = [];
  try {
    const { values, positionals } = parseCommand(argv, {});
    if (values.help) {
      io.out(VALIDATE_USAGE);
      return EXIT_OK;
    }
    if (positionals.length === 0) throw new UsageError("give at least one file or directory to validate");
    for (const path of positionals) {
      items.push(
        ...(await readSourceItems(path).catch((err: NodeJS.ErrnoException) => {
          throw new UsageError(
            err.code === "ENOENT" ? `no such file or directory: ${path}` : `${path}: ${err.message}`,
          );
        })),
      );
    }
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    io.err(`${err.message}\n\n${VALIDATE_USAGE}`);
    return EXIT_USAGE;
  }

  let invalid = 0;
  for (const item of items) {
    if (isSourceProblem(item)) {
      invalid++;
      io.out(`${item.origin} ${item.error}\n`);
      continue;
    }
    const result = subscriptionNotificationSchema.safeParse(item.notification);
    if (result.success) continue;
    invalid++;
    // The same wording as the receiver's 400 answer, so a file and a rejected delivery read alike.
    for (const issue of result.error.issues) io.out(`${item.origin} ${issueText(issue)}\n`);
  }
  const noun = items.length === 1 ? "notification" : "notifications";
  io.out(`${items.length} ${noun} checked, ${invalid} invalid\n`);
  return invalid === 0 ? EXIT_OK : EXIT_NOT_PROCESSED;
}
