import { processIo } from "./args.js";
import { runCommandLine } from "./command-line.js";

// Exit once the output is written: keep-alive sockets and timers of an HTTP client must not hold the
// process open after the answer, nor cut it short before stdout is flushed.
void runCommandLine(process.argv.slice(2), processIo()).then((code) => {
  process.exitCode = code;
  process.stdout.write("", () => process.stderr.write("", () => process.exit(code)));
});
