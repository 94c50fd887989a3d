/**
 * The package's errors: one base class, and a stable `code` (`MW_...`, listed in docs/errors.md) on
 * every error a caller can meet, so code can branch on `err.code` instead of a message's words.
 *
 * A caller's configuration mistake stays the JavaScript type it always was (a `TypeError` for a value
 * of the wrong kind, a `RangeError` for one out of range): `coded()` gives it its code, and
 * `err instanceof MerchantWebhooksError` holds for it as for the classes below.
 */

/** Marks an error as this package's: on the base class's prototype, and on each `coded()` error. */
const OURS = Symbol.for("merchant-webhooks.error");

export interface MerchantWebhooksErrorOptions {
  cause?: unknown;
  /** The HTTP status the receiver answers with for this error, where it answers one. */
  status?: number;
}

/** Every error this package throws for a caller's mistake or a refused operation. */
export class MerchantWebhooksError extends Error {
  override name = "MerchantWebhooksError";
  /** Stable across versions: `MW_` and upper-case words, listed with its fix in docs/errors.md. */
  readonly code: string;
  /** The HTTP status the receiver answers with for this error, where it answers one. */
  readonly status: number | undefined;
  /** For an options mistake (`MW_UNKNOWN_OPTION`, `MW_INVALID_OPTION`...), the option's name, e.g. `"retry.attempts"`. */
  declare readonly option?: string;

  constructor(code: string, message: string, options?: MerchantWebhooksErrorOptions) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.status = options?.status;
  }

  /**
   * `instanceof MerchantWebhooksError` also holds for the `TypeError`s and `RangeError`s `coded()`
   * marks; `instanceof` a subclass stays the plain prototype check.
   */
  static override [Symbol.hasInstance](value: unknown): boolean {
    // biome-ignore lint/complexity/noThisInStatic: `this` is the class on the right of `instanceof`, a subclass included
    if (this !== MerchantWebhooksError) return Function.prototype[Symbol.hasInstance].call(this, value);
    return typeof value === "object" && value !== null && OURS in value;
  }
}
Object.defineProperty(MerchantWebhooksError.prototype, OURS, { value: true });

/** `error` with its `code` set and marked as this package's; it keeps its own type (TypeError, RangeError...). */
export function coded<E extends Error, C extends string>(error: E, code: C): E & { readonly code: C } {
  Object.defineProperty(error, OURS, { value: true });
  return Object.assign(error, { code });
}

/** The codes of a caller's mistake in an options object; each such error also names the option. */
export type OptionErrorCode = "MW_UNKNOWN_OPTION" | "MW_UNKNOWN_HANDLER" | "MW_INVALID_OPTION" | "MW_INVALID_TIMEOUT";

/**
 * `coded()` for an options mistake: `option` is the option's name as the caller writes it
 * (`"basePath"`, `"retry.attempts"` inside a nested object; `"options"` when the object itself is wrong),
 * so a caller that reads its settings from the environment can say which one to correct without
 * parsing the message.
 */
export function optionError<E extends Error, C extends OptionErrorCode>(
  error: E,
  code: C,
  option: string,
): E & { readonly code: C; readonly option: string } {
  return Object.assign(coded(error, code), { option });
}
