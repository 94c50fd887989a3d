/** Headers as Node (`IncomingHttpHeaders`) or the Fetch API (`Headers`) hold them. */
export type HeaderSource = Headers | Record<string, string | string[] | number | undefined>;

/** One plain object with lower-case names, as `verify` hooks and handlers see the request headers. */
export function normalizeHeaders(source: HeaderSource): Record<string, string> {
  const out: Record<string, string> = Object.create(null);
  if (typeof (source as Headers).forEach === "function" && typeof (source as Headers).get === "function") {
    (source as Headers).forEach((value, name) => {
      out[name] = value;
    });
    return out;
  }
  for (const [name, value] of Object.entries(source)) {
    if (value === undefined) continue;
    out[name.toLowerCase()] = Array.isArray(value) ? value.join(", ") : String(value);
  }
  return out;
}
