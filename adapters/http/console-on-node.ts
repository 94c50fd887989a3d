import type { IncomingMessage, ServerResponse } from "node:http";
import type { ConsoleHandler } from "../../src/console/console-handler.js";
import { readNodeBody } from "../../src/shared/read-node-body.js";

/** The console's forms are small: an id, a reason, a filter, the CSRF token. */
const CONSOLE_BODY_LIMIT = 64 * 1024;
const CONSOLE_BODY_TIMEOUT_MS = 10_000;

/**
 * Answer a Node request with the console's fetch handler, or return false when the path is not under
 * the console's `basePath` (so a framework can pass it on). `url` is the request's path and query as
 * the app received it (Express strips a mount path from `req.url`; `req.originalUrl` keeps it).
 */
export async function serveConsoleOnNode(
  handler: ConsoleHandler,
  req: IncomingMessage & { body?: unknown },
  res: ServerResponse,
  url = req.url ?? "/",
): Promise<boolean> {
  const path = url.split("?")[0]!;
  if (path !== handler.basePath && !path.startsWith(`${handler.basePath}/`)) return false;
  try {
    const method = req.method ?? "GET";
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (typeof value === "string") headers.set(name, value);
      else if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    }
    let body: Uint8Array | undefined;
    if (method === "POST" && req.readableEnded && isForm(req.body)) {
      // A body parser (express.urlencoded()) read the form already: post it on as it parsed it.
      body = new TextEncoder().encode(formText(req.body));
      headers.set("content-type", "application/x-www-form-urlencoded");
    } else if (method === "POST") {
      const read = await readNodeBody(req, CONSOLE_BODY_LIMIT, CONSOLE_BODY_TIMEOUT_MS);
      if (!read.ok) {
        res.writeHead(read.reason === "too_large" ? 413 : 400, {
          "content-type": "text/plain; charset=utf-8",
          connection: "close",
        });
        res.end("unreadable form");
        return true;
      }
      body = read.bytes;
    }
    const request = new Request(new URL(url, `http://${req.headers.host ?? "localhost"}`), {
      method,
      headers,
      ...(body ? { body: body as Uint8Array<ArrayBuffer> } : {}),
    });
    const response = await handler(request);
    const text = Buffer.from(await response.arrayBuffer());
    const out: Record<string, string | string[]> = {};
    response.headers.forEach((value, name) => {
      out[name] = value;
    });
    const cookies = response.headers.getSetCookie();
    if (cookies.length > 0) out["set-cookie"] = cookies;
    out["content-length"] = String(text.length);
    res.writeHead(response.status, out);
    res.end(method === "HEAD" ? undefined : text);
  } catch {
    if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain; charset=utf-8" });
    res.end("console error");
  }
  return true;
}

/** A form as a body parser leaves it: each field a string, or a list of them (a field sent more than once). */
type ParsedForm = Record<string, string | string[]>;

function isForm(body: unknown): body is ParsedForm {
  const field = (value: unknown) => typeof value === "string";
  return (
    body !== null &&
    typeof body === "object" &&
    Object.values(body).every((value) => field(value) || (Array.isArray(value) && value.every(field)))
  );
}

function formText(form: ParsedForm): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(form))
    for (const item of Array.isArray(value) ? value : [value]) params.append(name, item);
  return params.toString();
}
