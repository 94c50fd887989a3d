/**
 * Positions are instants, kept in one sortable form so that every store compares them the same way
 * with a plain character-by-character comparison (in Lua too, where numbers are doubles and could
 * not hold nanoseconds since 1970):
 *
 *   `YYYY-MM-DDTHH:MM:SS[.fraction]` in UTC, the fraction without trailing zeros.
 *
 * The date and time part has a fixed width, so two positions compare as their instants do: a longer
 * fraction after the same second is later, and no fraction sorts before any fraction (`.` never meets
 * a digit at the same place, because trailing zeros are dropped). Every fraction digit counts: two
 * times a nanosecond apart, or less, are still ordered. Appending `Z` gives back an RFC 3339 string.
 */
export type SortablePosition = string;

// Offsets up to ±23:59 (RFC 3339 allows them); the schema's own pattern already checked notifications.
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/;

/**
 * The sortable form of an RFC 3339 date-time (any offset, any number of fraction digits) or a `Date`.
 * Undefined when the value is not a valid instant, or falls outside the years 0000 to 9999 in UTC.
 */
export function sortablePosition(value: string | Date): SortablePosition | undefined {
  if (value instanceof Date) {
    const ms = value.getTime();
    return Number.isNaN(ms) ? undefined : sortableOf(ms, String(value.getUTCMilliseconds()).padStart(3, "0"));
  }
  const match = RFC3339.exec(value);
  if (!match) return undefined;
  const [, year, month, day, hour, minute, second, fraction = "", sign, offsetHours, offsetMinutes] = match;
  const [y, mo, d, h, mi, s] = [year, month, day, hour, minute, second].map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (mo < 1 || mo > 12 || d < 1 || d > daysIn(y, mo) || h > 23 || mi > 59 || s > 60) return undefined;
  // setUTCFullYear, not Date.UTC: Date.UTC reads years 0 to 99 as 1900 to 1999.
  const local = new Date(0);
  local.setUTCFullYear(y, mo - 1, d);
  // A leap second (:60) lands on the next minute's :00, the same instant for ordering.
  local.setUTCHours(h, mi, s, 0);
  const offsetMs = sign ? (sign === "-" ? -1 : 1) * (Number(offsetHours) * 60 + Number(offsetMinutes)) * 60_000 : 0;
  return sortableOf(local.getTime() - offsetMs, fraction);
}

/** The RFC 3339 (UTC) string of a sortable position, as handlers see it in `ctx.previousPosition`. */
export function positionToRfc3339(position: SortablePosition): string {
  return `${position}Z`;
}

/** Whether `a` is a strictly earlier instant than `b`. */
export function isBefore(a: SortablePosition, b: SortablePosition): boolean {
  return a < b;
}

/** `ms` holds whole seconds here; the sub-second part comes from `fraction`, digit for digit. */
function sortableOf(ms: number, fraction: string): SortablePosition | undefined {
  const seconds = Math.floor(ms / 1000) * 1000;
  const date = new Date(seconds);
  const year = date.getUTCFullYear();
  if (Number.isNaN(year) || year < 0 || year > 9999) return undefined;
  const digits = fraction.replace(/0+$/, "");
  return date.toISOString().slice(0, 19) + (digits ? `.${digits}` : "");
}

function daysIn(year: number, month: number): number {
  const date = new Date(0);
  date.setUTCFullYear(year, month, 0);
  return date.getUTCDate();
}
