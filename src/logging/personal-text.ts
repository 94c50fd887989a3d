import { REDACTED } from "./card-numbers.js";

const LOCAL_CHAR = /[A-Za-z0-9._%+-]/;
const DOMAIN_CHAR = /[A-Za-z0-9.-]/;

/**
 * Emails inside free text. Found by walking out from each `@` rather than by one regex, which would
 * backtrack quadratically over a long run of name characters with no `@`.
 */
function redactEmails(text: string): string {
  let at = text.indexOf("@");
  if (at < 0) return text;
  let out = "";
  let copied = 0;
  while (at >= 0) {
    let start = at;
    while (start > copied && LOCAL_CHAR.test(text[start - 1]!)) start--;
    let end = at + 1;
    while (end < text.length && DOMAIN_CHAR.test(text[end]!)) end++;
    while (end > at + 1 && text[end - 1] === ".") end--; // a sentence's full stop is not the domain's
    const domain = text.slice(at + 1, end);
    if (start < at && /^[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+$/.test(domain)) {
      out += text.slice(copied, start) + REDACTED;
      copied = end;
    }
    at = text.indexOf("@", Math.max(end, at + 1));
  }
  return out + text.slice(copied);
}

const IPV4 =
  /(?<![0-9A-Za-z.])(?:(?:25[0-5]|2[0-4][0-9]|1?[0-9]?[0-9])\.){3}(?:25[0-5]|2[0-4][0-9]|1?[0-9]?[0-9])(?![0-9A-Za-z]|\.[0-9])/g;
/** Hex groups joined by colons; only those that read as an IPv6 address (`isIPv6Shape`) are replaced. */
const IPV6_CANDIDATE = /(?<![0-9A-Za-z_:.])(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}(?![0-9A-Za-z_:])/g;

/** Eight groups, or fewer with exactly one `::`; rules out clock times (`10:00:00`) and the like. */
function isIPv6Shape(text: string): boolean {
  const compressed = text.indexOf("::");
  if (compressed >= 0) return text.indexOf("::", compressed + 1) < 0;
  return text.split(":").length === 8 && !text.split(":").includes("");
}

/**
 * A loopback address names this machine, never a person: kept, so that a connection error still says
 * where it tried (`connect ECONNREFUSED 127.0.0.1:6379`). A host and port are diagnostics.
 */
// Node writes an IPv6 address and its port unbracketed: `connect ECONNREFUSED ::1:5432`.
const isLoopback = (ip: string): boolean => ip.startsWith("127.") || /^(?:0{0,4}:){2,7}0{0,3}1(?::\d{1,5})?$/.test(ip);

/** Emails and IP addresses anywhere in a string, for fields that are not known to hold them. */
export function redactPersonalText(text: string): string {
  let out = text.includes("@") ? redactEmails(text) : text;
  if (out.includes(".")) out = out.replace(IPV4, (m) => (isLoopback(m) ? m : REDACTED));
  if (out.includes(":")) out = out.replace(IPV6_CANDIDATE, (m) => (isIPv6Shape(m) && !isLoopback(m) ? REDACTED : m));
  return out;
}
