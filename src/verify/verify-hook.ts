/**
 * Checks a delivery's signature over the exact bytes received, before anything is parsed. Return (or
 * resolve) `false`, or throw, to answer 401. Headers have lower-case names.
 */
export type VerifyHook = (rawBody: Uint8Array, headers: Readonly<Record<string, string>>) => boolean | Promise<boolean>;
