/**
 * A notification is JSON. A missing content-type is tolerated (some senders omit it); a present one must
 * be `application/json` or a `+json` type, in UTF-8 when a charset is named.
 *
 * What is wrong with a content-type, as the 415 answer says it: the media type, or (for JSON in
 * another encoding) the charset, so a sender with `charset=latin1` is not told to send JSON it sends.
 */
export function contentTypeProblem(value: string | undefined): string | undefined {
  if (value === undefined || value === "") return undefined;
  const [type = "", ...params] = value.toLowerCase().split(";");
  const mime = type.trim();
  if (mime !== "application/json" && !(mime.startsWith("application/") && mime.endsWith("+json")))
    return "content-type must be application/json";
  for (const param of params) {
    const [name, charset] = param.split("=").map((part) => part.trim().replace(/^"|"$/g, ""));
    if (name === "charset" && charset !== "utf-8" && charset !== "utf8")
      return "charset must be utf-8: JSON notifications are UTF-8 (RFC 8259)";
  }
  return undefined;
}
