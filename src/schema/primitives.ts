import { z } from "zod";

// Field rules shared by every object schema. Each is built once, at module load: the notification
// schema runs on every request, so nothing here may allocate a schema or compile a regex per parse.

/**
 * RFC 3339 date-time: `T`/`t` separator, optional fraction, `Z`/`z` or a `+hh:mm`/`-hh:mm` offset.
 * One regex checks the ranges too: day limits per month (Feb 29 is let through in every year, since a
 * leap-year test needs arithmetic), hours 00-23, minutes 00-59, seconds 00-60 (60 is a leap second).
 */
const RFC3339 =
  /^\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\d|30)|02-(?:0[1-9]|1\d|2\d))[Tt](?:[01]\d|2[0-3]):[0-5]\d:(?:[0-5]\d|60)(?:\.\d+)?(?:[Zz]|[+-](?:[01]\d|2[0-3]):[0-5]\d)$/;

export const timestampSchema = z.string().regex(RFC3339, "must be an RFC 3339 date-time");

/** Money.value, the interface's own pattern: optional minus, digits, optional fraction. */
export const moneyValueSchema = z.string().regex(/^((-?[0-9]+)|(-?([0-9]+)?[.][0-9]+))$/, "must be a decimal amount");

/** ISO 4217 alphabetic code: three upper-case letters. */
export const currencyCodeSchema = z.string().regex(/^[A-Z]{3}$/, "must be a three-letter ISO 4217 code");

export const nonEmptyString = z.string().min(1);

export const emailSchema = z.email();

/** The interface's `ip` type does not say which family, so both are accepted. */
export const ipSchema = z.union([z.ipv4(), z.ipv6()]);

export const uriSchema = z.url();

/**
 * int64 in the proto3 JSON mapping arrives as a JSON number or as a decimal string. Both are accepted
 * and kept as received rather than normalised: turning a string into a number loses digits past 2^53,
 * and turning a number into a string would surprise a handler that compares it with Date.now(). A
 * number must be a safe integer, because JSON.parse has already rounded anything larger. A string is
 * limited to 19 digits (int64's width); its exact bound is not checked, which would need a refine.
 */
export const int64Schema = z.union([z.int(), z.string().regex(/^-?\d{1,19}$/, "must be a decimal integer")]);

/**
 * An enumeration that may grow. Any string is accepted at run time, so a value the platform adds later
 * does not reject the notification; the known values only inform the type, which stays the known union
 * (for completion and narrowing) plus `string & {}` (so other strings type-check too).
 */
export function openEnum<const T extends readonly [string, ...string[]]>(
  _known: T,
): z.ZodType<T[number] | (string & {}), string> {
  return z.string() as z.ZodType<string, string> as z.ZodType<T[number] | (string & {}), string>;
}

/** A map the interface calls "free map of string to string". */
export const stringMapSchema = z.record(z.string(), z.string());

/** A map the interface calls only "free map": it names no value type, so any JSON value is kept. */
export const freeMapSchema = z.record(z.string(), z.unknown());

/**
 * An object that keeps fields it does not list. At run time it is `z.looseObject`: a field the platform
 * adds later passes through to handlers untouched. Its type lists only the known fields, without the
 * `[key: string]: unknown` a loose object infers, so a misspelled field (`subscription_stauts`) is a
 * compile error instead of `unknown`. Read a field this version does not know with a cast.
 */
export function openObject<const Shape extends z.core.$ZodLooseShape>(shape: Shape): z.ZodObject<Shape, z.core.$strip> {
  return z.looseObject(shape) as unknown as z.ZodObject<Shape, z.core.$strip>;
}
