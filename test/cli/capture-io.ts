import type { CliIo } from "../../src/cli/args.js";

/** A terminal or pipe stand-in for running a command in-process: what it wrote, as a user would see it. */
export function captureIo(options: { tty?: boolean; errTty?: boolean } = {}) {
  const io: CliIo & { stdout: string; stderr: string } = {
    stdout: "",
    stderr: "",
    out: (text) => void (io.stdout += text),
    err: (text) => void (io.stderr += text),
    tty: options.tty ?? false,
    errTty: options.errTty ?? false,
    columns: 100,
  };
  return io;
}
