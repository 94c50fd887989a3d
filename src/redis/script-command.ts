import { createHash } from "node:crypto";
import { Command } from "ioredis";

/** A Lua script the store sends itself (`EVALSHA`, `EVAL` when the server may not hold it yet). */
export interface StoredScript {
  /** The name it is also registered under with `defineCommand`. */
  readonly name: string;
  readonly lua: string;
  readonly sha: string;
  readonly numberOfKeys: number;
  /** The sockets it was sent on as text: a new connection (a restarted or failed-over server) gets the text first. */
  readonly sentOn: WeakSet<object>;
}

export function storedScript(name: string, lua: string, numberOfKeys: number): StoredScript {
  return { name, lua, sha: createHash("sha1").update(lua).digest("hex"), numberOfKeys, sentOn: new WeakSet() };
}

/**
 * A script call as one ioredis `Command`, sent with `sendCommand`: no auto-pipeline batch, no wrapper
 * promise and no argument copies of `defineCommand`'s path, which cost more per call than the round
 * trip's own parsing. The store's call deadlines (`callDeadlines().watch`) bound it, so the client's
 * own `commandTimeout` timer, one per command, is not set.
 */
class ScriptCommand extends Command {
  constructor(
    private readonly script: StoredScript,
    name: "evalsha" | "eval",
    args: ConstructorParameters<typeof Command>[1],
    options: ScriptCommandOptions,
  ) {
    super(name, args, options);
  }

  override setTimeout(): void {}

  /**
   * The script's text the first time it goes out on a socket, its SHA after, as ioredis's own scripts
   * do: a call rarely made (an undo after a lost answer) must not spend its time limit on a `NOSCRIPT`
   * round trip on a connection the server has just opened.
   */
  override toWritable(socket: object): string | Buffer {
    if (this.name === "evalsha" && !this.script.sentOn.has(socket)) {
      this.script.sentOn.add(socket);
      this.name = "eval";
      this.args[0] = this.script.lua;
    }
    return super.toWritable(socket);
  }
}

/** How a client's script commands are made: replies as strings, and the client's `keyPrefix` on the keys, as `defineCommand` puts it. */
export type ScriptCommandOptions = ConstructorParameters<typeof Command>[2];

export function scriptCommandOptions(client: { options: { keyPrefix?: string } }): ScriptCommandOptions {
  const { keyPrefix } = client.options;
  return keyPrefix ? { replyEncoding: "utf8", keyPrefix } : { replyEncoding: "utf8" };
}

/** `EVALSHA` of `script` with its keys, then its arguments (Lua's `KEYS`, then `ARGV`). */
export function scriptCommand(
  script: StoredScript,
  keysAndArgs: ReadonlyArray<string | number>,
  options: ScriptCommandOptions,
): Command {
  return new ScriptCommand(script, "evalsha", [script.sha, script.numberOfKeys, ...keysAndArgs], options);
}

/** The same call as `EVAL` with the script's text, after the server answered `NOSCRIPT` (flushed, restarted, failed over). */
export function evalCommand(script: StoredScript, sent: Command): Command {
  // The keys of `sent` carry the prefix already.
  const args = sent.args.slice();
  args[0] = script.lua;
  return new ScriptCommand(script, "eval", args, { replyEncoding: "utf8" });
}

export const isNoScript = (error: unknown): boolean => error instanceof Error && error.message.startsWith("NOSCRIPT");
