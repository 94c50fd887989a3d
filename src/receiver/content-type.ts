/**
 * A notification is JSON. A missing content-type is tolerated (some senders omit it); a present one must
 * be `application/json` or a `+json` type, in UTF-8 when a charset is named.
 */
export function isAcceptableContentType(value: string | undefined): boolean {
  if (value === undefined || value === "") return true;
  const [type = "", ...params] = value.toLowerCase().split(";");
  const mime = type.trim();
  if (mime !== "application/json" && !(mime.startsWith("application/") && mime.endsWith("+json"))) return false;
  for (const param of params) {
    const [name, charset] = param.split("=").map((part) => part.trim().replace(/^"|"$/g, ""));
    if (name === "charset" && charset !== "utf-8" && charset !== "utf8") return false;
  }
  return true;
}
