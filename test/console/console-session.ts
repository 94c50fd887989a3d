import type { ConsoleHandler } from "merchant-webhooks/console";

/**
 * A person at the console through its fetch handler: pages read as text, forms posted with the CSRF
 * token and cookie the last page handed out, redirects followed as a browser would (303 to a GET).
 */
export function consoleSession(handler: ConsoleHandler, origin = "http://console.test") {
  let cookie = "";
  let token = "";
  const authorization = "Bearer ops";

  async function get(path: string): Promise<{ status: number; text: string; location?: string }> {
    const response = await handler(new Request(`${origin}${path}`, { headers: { authorization, cookie } }));
    const set = response.headers.get("set-cookie");
    if (set) cookie = set.split(";")[0]!;
    const text = await response.text();
    const found = /name="csrf" value="([^"]+)"/.exec(text);
    if (found) token = found[1]!;
    return { status: response.status, text };
  }

  /** Post a form (`fields` in order; a name may repeat) and follow the answer's redirect. */
  async function post(path: string, fields: Array<[string, string]>) {
    const body = new URLSearchParams([["csrf", token], ...fields]).toString();
    const response = await handler(
      new Request(`${origin}${path}`, {
        method: "POST",
        headers: { authorization, cookie, "content-type": "application/x-www-form-urlencoded" },
        body,
      }),
    );
    const location = response.headers.get("location");
    if (response.status !== 303 || !location) return { status: response.status, text: await response.text() };
    return { ...(await get(location.replace(origin, ""))), location };
  }

  return { get, post };
}

/** A page's text without its markup, spaces folded: what a person reads. */
export function readable(html: string): string {
  return html
    .replace(/<[^>]+>/g, " ")
    .replace(/&#39;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, "&")
    .replace(/\s+/g, " ");
}
