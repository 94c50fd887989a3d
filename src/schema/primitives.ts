import { z } from "zod";

/**
 * RFC 3339 date-time: `T`/`t` separator, optional fraction, `Z`/`z` or a numeric offset. The ranges
 * are checked by the pattern itself so one regex test decides.
 */
const RFC3339 =
  /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])[Tt]([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)(\.\d+)?([Zz]|[+-]([01]\d|2[0-3]):[0-5]\d)$/;

export const timestampSchema = z.string().regex(RFC3339, "must be an RFC 3339 date-time");

/** Money.value as the interface states it: optional minus, digits, optional fraction. */
export const moneyValueSchema = z.string().regex(/^((-?[0-9]+)|(-?([0-9]+)?[.][0-9]+))$/, "must be a decimal amount");

/** ISO 4217: three letters. */
export const currencyCodeSchema = z.string().regex(/^[A-Z]{3}$/, "must be a three-letter ISO 4217 code");

export const nonEmptyString = z.string().min(1);

export const emailSchema = z.email();

export const ipSchema = z.union([z.ipv4(), z.ipv6()]);

export const uriSchema = z.url();

/**
 * int64 in the proto3 JSON mapping arrives as a JSON number or a decimal string; both are accepted
 * and kept as received (a string may exceed 2^53, so converting it to a number could lose digits).
 */
export const int64Schema = z.union([z.int(), z.string().regex(/^-?\d{1,19}$/, "must be a decimal integer")]);

/**
 * An enumeration that may grow: the known values are listed for types and editors, and any other
 * string is accepted, so a value the platform adds later does not reject the notification.
 */
export function openEnum<const T extends readonly [string, ...string[]]>(values: T) {
  return z.string().describe(`one of ${values.join(", ")} or a newer value`) as unknown as z.ZodType<T[number] | (string & {}), string>;
}

/** A map the interface calls "free map of string to string". */
export const stringMapSchema = z.record(z.string(), z.string());
