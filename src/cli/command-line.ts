import { type CliIo, EXIT_OK, EXIT_USAGE } from "./args.js";
import { printable, printableLines } from "./printable.js";
import { packageVersion } from "./version.js";

const USAGE = `Usage: merchant-webhooks <command> [options]

Commands:
  replay <file|dir> --url <url>   send saved or recorded notifications to an endpoint, count the answers
  send <event> --url <url>        send one built notification of an event type
  validate <file|dir>...          check notifications against the schema
  redrive --queue <name>          move notifications that used up their attempts back to the queue
  inspect <id>                    print one notification's record, ordering, job and recording
  simulate --webhook-url <url>    run a local platform: API endpoints, deliveries with retries, scenarios
  reconcile --api <url>           find orders and renewals the platform never delivered; --repair runs them once

Run merchant-webhooks <command> --help for a command's options; --version prints the version.

Exit status: 0 when everything was processed (or valid), 1 when something was not, 2 on a usage error.
`;

type Command = (argv: readonly string[], io: CliIo) => Promise<number>;

// Each command is loaded only when run: `validate` should not wait for an HTTP client or BullMQ to load.
const COMMANDS: Readonly<Record<string, () => Promise<Command>>> = {
  replay: async () => (await import("./commands/replay.js")).runReplay,
  send: async () => (await import("./commands/send.js")).runSend,
  validate: async () => (await import("./commands/validate.js")).runValidate,
  simulate: async () => {
    const { runSimulate } = await import("./commands/simulate.js");
    return (argv, io) => runSimulate(argv, io);
  },
  redrive: async () => {
    const { runRedrive } = await import("./commands/redrive.js");
    return (argv, io) => runRedrive(argv, io);
  },
  inspect: async () => {
    const { runInspect } = await import("./commands/inspect.js");
    return (argv, io) => runInspect(argv, io);
  },
  reconcile: async () => {
    const { runReconcile } = await import("./commands/reconcile.js");
    return (argv, io) => runReconcile(argv, io);
  },
};

/**
 * Runs the command line `argv` (without node and the script), writing to `io`, and resolves to the exit
 * status. The binary (`main.ts`) calls it with the process's streams; tests call it in-process.
 */
export async function runCommandLine(argv: readonly string[], io: CliIo): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined) {
    io.err(USAGE);
    return EXIT_USAGE;
  }
  if (name === "--help" || name === "-h") {
    io.out(USAGE);
    return EXIT_OK;
  }
  if (name === "--version" || name === "-v") {
    io.out(`${packageVersion()}\n`);
    return EXIT_OK;
  }
  if (name === "help")
    return rest[0] && Object.hasOwn(COMMANDS, rest[0]) ? run(rest[0], ["--help"], io) : runCommandLine(["--help"], io);
  if (!Object.hasOwn(COMMANDS, name)) {
    io.err(
      `unknown command "${printable(name)}": the commands are ${Object.keys(COMMANDS).join(", ")}\n` +
        'Run "merchant-webhooks --help" for what each does.\n',
    );
    return EXIT_USAGE;
  }
  return run(name, rest, io);
}

async function run(name: string, argv: readonly string[], io: CliIo): Promise<number> {
  try {
    const command = await COMMANDS[name]!();
    return await command(argv, io);
  } catch (err) {
    // An optional peer (bullmq for redrive) not installed: say which, not a stack from the loader.
    const missing = missingPackage(err);
    if (missing) {
      io.err(`${name} needs the ${missing} package, which is not installed: npm install ${missing}\n`);
      return 1;
    }
    // One line, not a stack: the user can act on the message; MERCHANT_WEBHOOKS_DEBUG=1 shows the rest.
    const detail = process.env.MERCHANT_WEBHOOKS_DEBUG ? (err as Error).stack : (err as Error).message;
    io.err(`${name} failed: ${printableLines(detail ?? String(err))}\n`);
    return 1;
  }
}

/** The package an import could not find (`bullmq`, `@scope/name`), when that is why `err` was thrown. */
function missingPackage(err: unknown): string | undefined {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code !== "ERR_MODULE_NOT_FOUND" && code !== "MODULE_NOT_FOUND") return undefined;
  // Node's words for ESM ("Cannot find package 'x' imported from ...") and CommonJS ("Cannot find module 'x'").
  return /Cannot find (?:package|module) '((?:@[^/'.][^/']*\/)?[^/'.][^/']*)/.exec((err as Error).message)?.[1];
}
