import { type ParseArgsConfig, parseArgs } from "node:util";
import { MerchantWebhooksError } from "../shared/errors.js";
import type { Signer } from "../testing/replay.js";
import { hmacSigner, standardWebhooksSigner } from "../testing/signers.js";
import { standardWebhooksKey } from "../verify/standard-webhooks-verifier.js";
import { printableLines } from "./printable.js";

/** Where a command writes, and what it knows about the terminal; tests pass their own. */
export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  /** stdout is a terminal: progress may be drawn in place. */
  tty: boolean;
  /** stderr is a terminal: long lists may be cut short there (a file or CI log gets them whole). */
  errTty?: boolean;
  columns: number;
}

export function processIo(): CliIo {
  return {
    out: (text) => void process.stdout.write(text),
    err: (text) => void process.stderr.write(text),
    tty: process.stdout.isTTY === true,
    errTty: process.stderr.isTTY === true,
    columns: process.stdout.columns ?? 80,
  };
}

/** Bad arguments: the command prints the message and its short usage and exits 2. */
export class UsageError extends MerchantWebhooksError {
  override readonly name = "UsageError";
  constructor(message: string) {
    super("MW_CLI_USAGE", message);
  }
}

/**
 * A usage error as a user should meet it: the message on one line, then the command's usage line and
 * where its options are explained, not the whole help text scrolling the message out of sight.
 */
export function reportUsageError(io: CliIo, err: UsageError, usage: string): number {
  const usageLine = usage.split("\n", 1)[0]!;
  const command = /^Usage: merchant-webhooks (\S+)/.exec(usageLine)?.[1];
  const more = command ? `Run "merchant-webhooks ${command} --help" for its options.` : "";
  io.err(`${printableLines(err.message)}\n${usageLine}\n${more}\n`);
  return EXIT_USAGE;
}

export const EXIT_OK = 0;
export const EXIT_NOT_PROCESSED = 1;
export const EXIT_USAGE = 2;

type Options = NonNullable<ParseArgsConfig["options"]>;

/** node:util parseArgs, with its errors turned into usage errors. */
export function parseCommand<O extends Options>(argv: readonly string[], options: O) {
  try {
    return parseArgs({
      args: [...argv],
      options: { ...options, help: { type: "boolean", short: "h" } },
      strict: true,
      allowPositionals: true,
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

/** The options of every command that sends notifications to an endpoint. */
export const SENDING_OPTIONS = {
  url: { type: "string", short: "u" },
  secret: { type: "string", short: "s" },
  scheme: { type: "string" },
  "signature-header": { type: "string" },
  header: { type: "string", short: "H", multiple: true },
  timeout: { type: "string" },
} as const satisfies Options;

export const SENDING_USAGE = `  -u, --url <url>                webhook endpoint to POST to (required)
  -s, --secret <secret>          sign each body with this secret
      --scheme <scheme>          hmac (default: HMAC-SHA256 hex of the body) or standard-webhooks
      --signature-header <name>  header of the hmac signature (default: x-signature)
  -H, --header <name: value>     add a header to every request; repeat for several
      --timeout <ms>             give up on an answer after this long (default: 30000)`;

export interface SendingSetup {
  url: string;
  sign?: Signer;
  headers: Record<string, string>;
  timeoutMs: number;
}

interface SendingValues {
  url?: string | undefined;
  secret?: string | undefined;
  scheme?: string | undefined;
  "signature-header"?: string | undefined;
  header?: string[] | undefined;
  timeout?: string | undefined;
}

/** Where and how to send, from the sending options; `url` may be absent only when nothing is sent. */
export function sendingSetup(values: SendingValues): SendingSetup {
  if (!values.url) throw new UsageError("--url is required");
  let url: URL;
  try {
    url = new URL(values.url);
  } catch {
    throw new UsageError(`--url is not a URL: ${values.url}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new UsageError(`--url must be http or https: ${values.url}`);
  const sign = signerFrom(values);
  return {
    url: url.toString(),
    ...(sign ? { sign } : {}),
    headers: headersFrom(values.header ?? []),
    timeoutMs: values.timeout === undefined ? 30_000 : milliseconds(values.timeout, "--timeout"),
  };
}

/** The signing options `send`, `replay` and `simulate` share. */
export interface SigningValues {
  secret?: string | undefined;
  scheme?: string | undefined;
  "signature-header"?: string | undefined;
}

export type SigningScheme = "hmac" | "standard-webhooks";

/**
 * The scheme to sign with and its secret, checked with the options that go with it (a Standard
 * Webhooks secret is checked whole here, once); undefined when nothing is to be signed. `fallback` is
 * the command's default scheme.
 */
export function signingFrom(
  values: SigningValues,
  fallback: SigningScheme,
): { scheme: SigningScheme; secret: string; header: string } | undefined {
  const scheme = values.scheme ?? fallback;
  if (scheme !== "hmac" && scheme !== "standard-webhooks")
    throw new UsageError(`--scheme must be hmac or standard-webhooks, got ${scheme}`);
  if (values.secret === undefined) {
    if (values.scheme !== undefined || values["signature-header"] !== undefined)
      throw new UsageError("--scheme and --signature-header need --secret");
    return undefined;
  }
  if (values.secret === "") throw new UsageError("--secret must not be empty");
  if (scheme === "standard-webhooks") {
    if (values["signature-header"] !== undefined)
      throw new UsageError("--signature-header applies to --scheme hmac only");
    try {
      standardWebhooksKey(values.secret);
    } catch {
      throw new UsageError('--secret for standard-webhooks must be "whsec_" followed by base64');
    }
  }
  return { scheme, secret: values.secret, header: values["signature-header"] ?? "x-signature" };
}

function signerFrom(values: SendingValues): Signer | undefined {
  const signing = signingFrom(values, "hmac");
  if (!signing) return undefined;
  return signing.scheme === "standard-webhooks"
    ? standardWebhooksSigner(signing.secret)
    : hmacSigner({ secret: signing.secret, header: signing.header });
}

/** `-H "x-tenant: acme"` -> `{ "x-tenant": "acme" }`. */
function headersFrom(list: readonly string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const item of list) {
    const colon = item.indexOf(":");
    const name = colon > 0 ? item.slice(0, colon).trim().toLowerCase() : "";
    if (!/^[!#$%&'*+.^_`|~0-9a-z-]+$/.test(name)) throw new UsageError(`--header must be "name: value", got ${item}`);
    headers[name] = item.slice(colon + 1).trim();
  }
  return headers;
}

/**
 * The longest delay a Node timer keeps: a longer one fires after 1 ms, so `--timeout 3000000000`
 * would give up at once rather than after 35 days.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** A time in whole milliseconds, 1 to `MAX_TIMER_MS`. */
export function milliseconds(text: string, option: string): number {
  const value = Number(text);
  if (!/^\d+$/.test(text.trim()) || value < 1 || value > MAX_TIMER_MS)
    throw new UsageError(
      `${option} must be a whole number of milliseconds from 1 to ${MAX_TIMER_MS} (about 24.8 days), got ${text}`,
    );
  return value;
}

/** A delay in whole milliseconds, 0 (none) to `MAX_TIMER_MS`. */
export function delayMilliseconds(text: string, option: string): number {
  const value = Number(text);
  if (!/^\d+$/.test(text.trim()) || value > MAX_TIMER_MS)
    throw new UsageError(
      `${option} must be a whole number of milliseconds from 0 to ${MAX_TIMER_MS} (about 24.8 days), got ${text}`,
    );
  return value;
}

/** A TCP port to listen on: 0 (any free one) to 65535. */
export function portNumber(text: string, option: string): number {
  const value = Number(text);
  if (!/^\d+$/.test(text.trim()) || value > 65_535)
    throw new UsageError(`${option} must be a port number from 0 to 65535, got ${text}`);
  return value;
}

export function positiveInteger(text: string, option: string): number {
  const value = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(value) || value < 1)
    throw new UsageError(`${option} must be a positive integer, got ${text}`);
  return value;
}
