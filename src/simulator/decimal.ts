// Money arithmetic on decimal strings, exact: amounts are scaled to integers (bigint) at the larger of
// the two scales, so "10.5" - "0.25" is "10.25" and never 10.249999.

interface Scaled {
  units: bigint;
  scale: number;
}

function scaled(value: string): Scaled {
  const negative = value.startsWith("-");
  const [whole = "0", fraction = ""] = (negative ? value.slice(1) : value).split(".");
  const units = BigInt(`${whole || "0"}${fraction}`);
  return { units: negative ? -units : units, scale: fraction.length };
}

function align(a: Scaled, b: Scaled): [bigint, bigint, number] {
  const scale = Math.max(a.scale, b.scale);
  return [a.units * 10n ** BigInt(scale - a.scale), b.units * 10n ** BigInt(scale - b.scale), scale];
}

function format(units: bigint, scale: number): string {
  const negative = units < 0n;
  const digits = (negative ? -units : units).toString().padStart(scale + 1, "0");
  const text = scale === 0 ? digits : `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
  return negative ? `-${text}` : text;
}

export function addDecimal(a: string, b: string): string {
  const [x, y, scale] = align(scaled(a), scaled(b));
  return format(x + y, scale);
}

export function subtractDecimal(a: string, b: string): string {
  const [x, y, scale] = align(scaled(a), scaled(b));
  return format(x - y, scale);
}

/** -1, 0 or 1 as a is less than, equal to or greater than b. */
export function compareDecimal(a: string, b: string): number {
  const [x, y] = align(scaled(a), scaled(b));
  return x < y ? -1 : x > y ? 1 : 0;
}
