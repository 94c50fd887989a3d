import { createHmac, randomBytes } from "node:crypto";
import { optionError } from "../shared/errors.js";
import { type KnownKeys, rejectUnknownKeys } from "../shared/option-keys.js";
import { constantTimeEqual } from "../verify/constant-time.js";
import { type Admin, AdminError, type AdminRedriveResult, type NotificationFilter } from "./admin.js";
import { CONSOLE_ICON, CONSOLE_SCRIPT, CONSOLE_STYLE, type Html } from "./html.js";
import {
  deadLettersPage,
  listPage,
  messagePage,
  notificationPage,
  overviewPage,
  type PageContext,
  subscriptionPage,
} from "./pages.js";

export interface ConsoleHandlerOptions {
  admin: Admin;
  /**
   * Decides whether a request may see the console: your own session, SSO header or basic-auth check.
   * Required: there is no open mode. Falsy (or a throw) answers 401 and shows nothing; a `Response`
   * is answered as it is (a redirect to your login page, a 401 with `WWW-Authenticate: Basic`).
   */
  authorize: (request: Request) => boolean | Response | Promise<boolean | Response>;
  /** Where the console is mounted; every link and form starts with it. Default `/console`. */
  basePath?: string;
  /** Hide every action and refuse every POST (403). Default false. */
  readOnly?: boolean;
  /**
   * Key of the CSRF tokens. Default: random per process; give the same one to every instance behind
   * one load balancer, so a page served by one is accepted by another.
   */
  csrfSecret?: string | Uint8Array;
}

const CONSOLE_KEYS: KnownKeys<ConsoleHandlerOptions> = {
  admin: true,
  authorize: true,
  basePath: true,
  readOnly: true,
  csrfSecret: true,
};

/** The console as a fetch handler; adapters mount it (see each adapter's `serveConsole`). */
export interface ConsoleHandler {
  (request: Request): Promise<Response>;
  readonly basePath: string;
}

/** No script but the console's own file, no style but its own, no frames, forms posting only back here. */
export const CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

const SECURITY_HEADERS: Record<string, string> = {
  "content-security-policy": CONSOLE_CSP,
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
};

const CSRF_COOKIE = "mw_console_csrf";

/**
 * The notification console: server-rendered pages over `admin`, behind `authorize`. Pages:
 * overview, the list with filters and cursor pages, a notification's timeline, a subscription's ordered
 * history, dead letters with bulk redrive; and the same data as JSON under `/api`. Every action is a
 * POST carrying the CSRF token the page was served with (403 without it).
 */
export function consoleHandler(options: ConsoleHandlerOptions): ConsoleHandler {
  // A misspelt `basepath` would leave the console at /console with every link pointing there.
  rejectUnknownKeys("consoleHandler", options, Object.keys(CONSOLE_KEYS));
  const { admin, authorize } = options ?? ({} as ConsoleHandlerOptions);
  if (!admin || typeof admin.listNotifications !== "function")
    throw optionError(new TypeError("consoleHandler: admin must be createAdmin(...)"), "MW_INVALID_OPTION", "admin");
  if (typeof authorize !== "function")
    throw optionError(
      new TypeError("consoleHandler: authorize(request) is required; the console has no open mode"),
      "MW_INVALID_OPTION",
      "authorize",
    );
  const base = normaliseBase(options.basePath ?? "/console");
  const readOnly = options.readOnly === true || !admin.canAct;
  const secret =
    options.csrfSecret === undefined
      ? randomBytes(32)
      : typeof options.csrfSecret === "string"
        ? Buffer.from(options.csrfSecret)
        : options.csrfSecret;
  const csrf = csrfTokens(secret);

  const handler = async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    if (url.pathname !== base && !url.pathname.startsWith(`${base}/`)) return text(404, "not found");
    let allowed: boolean | Response = false;
    try {
      allowed = await authorize(request);
    } catch {
      allowed = false;
    }
    if (allowed instanceof Response) return allowed;
    if (!allowed) return text(401, "unauthorized");
    const path = url.pathname.slice(base.length) || "/";
    try {
      if (request.method === "POST") return await act(request, path);
      if (request.method !== "GET" && request.method !== "HEAD") return text(405, "method not allowed");
      return await show(request, url, path);
    } catch (err) {
      const input = inputError(err);
      if (input) return errorPage(input.status, input.message, path);
      // An unexpected failure tells its class only: its message may hold a store's or payload's text.
      return text(500, `console error (${err instanceof Error ? err.name : "unknown"})`);
    }
  };

  /** An answer to a request the console cannot serve as asked: a page (JSON under `/api`) with a way back. */
  function errorPage(status: number, message: string, path: string): Response {
    if (path.startsWith("/api/")) return jsonStatus(status, { error: message });
    const title = status === 404 ? "Not found" : "Cannot do that";
    const markup = messagePage({ base, csrf: undefined }, title, message, {
      href: `${base}/`,
      text: "Back to the overview",
    });
    return htmlResponse(status, markup, undefined, base);
  }

  async function show(request: Request, url: URL, path: string): Promise<Response> {
    if (path === "/assets/console.js") return asset(CONSOLE_SCRIPT, "text/javascript; charset=utf-8");
    if (path === "/assets/console.css") return asset(CONSOLE_STYLE, "text/css; charset=utf-8");
    if (path === "/assets/icon.svg") return asset(CONSOLE_ICON, "image/svg+xml");
    const query = url.searchParams;
    const token = readOnly ? undefined : (csrf.valid(cookieOf(request, CSRF_COOKIE)) ?? csrf.fresh());
    const ctx: PageContext = { base, csrf: token };
    const notice = query.get("done");
    if (notice) ctx.notice = { text: notice.slice(0, 300), bad: query.get("bad") === "1" };
    const page = (markup: Html, status = 200) => htmlResponse(status, markup, token, base);
    const filter = filterOf(query);
    const cursor = query.get("cursor") || undefined;
    const limit = limitOf(query.get("limit"));

    if (path === "/api/overview") return json(await admin.overview());
    if (path === "/api/notifications")
      return json(await admin.listNotifications({ ...filter, limit, ...(cursor ? { cursor } : {}) }));
    if (path.startsWith("/api/notifications/")) {
      const detail = await admin.getNotification(decodeSegment(path.slice("/api/notifications/".length)));
      return detail ? json(detail) : text(404, "no such notification");
    }
    if (path === "/") return page(overviewPage(ctx, await admin.overview()));
    if (path === "/find") {
      const id = query.get("id")?.trim() ?? "";
      return redirect(id === "" ? `${base}/notifications` : `${base}/notifications/${encodeURIComponent(id)}`);
    }
    if (path === "/notifications") {
      const found = await admin.listNotifications({ ...filter, limit, ...(cursor ? { cursor } : {}) });
      return page(listPage(ctx, filter, found.items, found.cursor));
    }
    if (path.startsWith("/notifications/")) {
      const id = decodeSegment(path.slice("/notifications/".length));
      const detail = await admin.getNotification(id);
      return detail
        ? page(notificationPage(ctx, detail))
        : page(messagePage(ctx, "Not found", `No record, job or recording of ${id}.`), 404);
    }
    if (path.startsWith("/subscriptions/")) {
      const key = decodeSegment(path.slice("/subscriptions/".length));
      const found = await admin.listNotifications({ subscriptionId: key, limit: 500 });
      return page(subscriptionPage(ctx, key, found.items));
    }
    if (path === "/dead-letters") {
      const deadFilter: NotificationFilter = { ...filter, state: "failed" };
      const found = await admin.listNotifications({ ...deadFilter, limit, ...(cursor ? { cursor } : {}) });
      const matched = query.get("matched");
      const dryRun = matched !== null && /^\d+$/.test(matched) ? { matched: Number(matched) } : undefined;
      return page(deadLettersPage(ctx, deadFilter, found.items, found.cursor, dryRun));
    }
    return text(404, "not found");
  }

  async function act(request: Request, path: string): Promise<Response> {
    if (readOnly) return text(403, "the console is read-only");
    const form = await formOf(request);
    const sent = form.get("csrf") ?? "";
    const cookie = cookieOf(request, CSRF_COOKIE);
    // The token must be one this console issued, and the one in this browser's cookie: a page on
    // another site can make the browser post, but can read neither.
    if (sent === "" || cookie === undefined || sent !== cookie || csrf.valid(sent) === undefined)
      return text(403, "missing or wrong CSRF token; reload the page and try again");
    const done = (message: string, to: string, bad = false) =>
      redirect(`${to}${to.includes("?") ? "&" : "?"}done=${encodeURIComponent(message)}${bad ? "&bad=1" : ""}`);
    const id = form.get("id") ?? "";
    const back = `${base}/notifications/${encodeURIComponent(id)}`;
    if (path === "/actions/redrive") {
      const mode = form.get("mode");
      if (mode === "ids") {
        const ids = form.getAll("id").filter((value) => value !== "");
        if (ids.length === 0) return done("nothing selected", `${base}/dead-letters`, true);
        const result = await admin.redrive({ ids });
        const to = ids.length === 1 ? `${base}/notifications/${encodeURIComponent(ids[0]!)}` : `${base}/dead-letters`;
        return done(redrivenText(result), to, result.redriven === 0);
      }
      const filter = filterOf(form);
      if (mode === "dry-run") {
        const result = await admin.redrive({ filter, dryRun: true });
        return redirect(`${base}/dead-letters${searchOf({ ...stringsOf(filter), matched: String(result.matched) })}`);
      }
      const result = await admin.redrive({ filter });
      return done(redrivenText(result, " matching"), `${base}/dead-letters`, result.redriven < result.matched);
    }
    if (path === "/actions/replay") {
      const result = await admin.replay(id).catch((err: unknown) => {
        // Nothing to replay from (no recording, no dead letter): said on the notification's page.
        if (err instanceof AdminError && err.code === "MW_ADMIN_NOT_FOUND")
          return { status: "busy", message: err.message };
        throw err;
      });
      return done(result.message, back, result.status === "busy");
    }
    if (path === "/actions/discard") {
      const result = await admin.discard(id, { reason: form.get("reason") ?? "" });
      return done(result.message, back, !result.discarded);
    }
    return text(404, "no such action");
  }

  return Object.assign(handler, { basePath: base });
}

/** Tokens `nonce.hmac(nonce)`: any instance holding the secret can tell its own from a forged one. */
function csrfTokens(secret: Uint8Array) {
  const sign = (nonce: string) => createHmac("sha256", secret).update(nonce).digest("base64url");
  return {
    fresh: () => {
      const nonce = randomBytes(18).toString("base64url");
      return `${nonce}.${sign(nonce)}`;
    },
    valid(token: string | undefined): string | undefined {
      if (!token) return undefined;
      const [nonce, mac] = token.split(".");
      if (!nonce || !mac) return undefined;
      const expected = Buffer.from(sign(nonce));
      return constantTimeEqual(Buffer.from(mac), expected) ? token : undefined;
    },
  };
}

/** "redriven 1 of 2: <id>: <why not>", the reasons of the first few left. */
function redrivenText(result: AdminRedriveResult, matching = ""): string {
  const why = result.skipped.slice(0, 3).map((skip) => `${skip.id}: ${skip.reason}`);
  const more = result.skipped.length > 3 ? [`and ${result.skipped.length - 3} more`] : [];
  return [`redriven ${result.redriven} of ${result.matched}${matching}`, ...why, ...more].join("; ");
}

/** A page's size: a whole number from 1 to 500, 50 when not given. */
function limitOf(value: string | null): number {
  if (value === null || value.trim() === "") return 50;
  const limit = Number(value);
  if (!Number.isInteger(limit) || limit < 1 || limit > 500)
    throw new AdminError(
      `limit must be a whole number from 1 to 500; got ${value.slice(0, 40)}`,
      "MW_ADMIN_BAD_FILTER",
    );
  return limit;
}

/** The status and message of an error in what a request asked (not the console's own), else undefined. */
function inputError(err: unknown): { status: number; message: string } | undefined {
  if (err instanceof AdminError) return { status: err.code === "MW_ADMIN_NOT_FOUND" ? 404 : 400, message: err.message };
  // The store's own checks of a listing's query (its cursor, its limit).
  const code = (err as { code?: unknown } | null)?.code;
  if (code === "MW_LIST_CURSOR" || code === "MW_LIST_LIMIT") return { status: 400, message: (err as Error).message };
  return undefined;
}

function normaliseBase(path: string): string {
  if (typeof path !== "string" || !path.startsWith("/"))
    throw optionError(
      new TypeError(`consoleHandler: basePath must start with "/"; got ${JSON.stringify(path)}`),
      "MW_INVALID_OPTION",
      "basePath",
    );
  return path.replace(/\/+$/, "");
}

const FILTER_KEYS = ["state", "eventType", "subscriptionId", "since", "until"] as const;

function filterOf(source: URLSearchParams): NotificationFilter {
  const filter: Record<string, string> = {};
  for (const key of FILTER_KEYS) {
    const value = source.get(key);
    if (typeof value === "string" && value.trim() !== "") filter[key] = value.trim();
  }
  return filter as NotificationFilter;
}

function stringsOf(filter: NotificationFilter): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of FILTER_KEYS) if (filter[key] !== undefined) out[key] = String(filter[key]);
  return out;
}

function searchOf(values: Record<string, string>): string {
  const search = new URLSearchParams(values).toString();
  return search === "" ? "" : `?${search}`;
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new AdminError("the path is not a well-formed id", "MW_ADMIN_NOT_FOUND");
  }
}

/** The posted form: the pages' forms are URL-encoded; any other body counts as an empty form (no token, 403). */
async function formOf(request: Request): Promise<URLSearchParams> {
  const type = request.headers.get("content-type") ?? "";
  if (type.startsWith("application/x-www-form-urlencoded")) return new URLSearchParams(await request.text());
  return new URLSearchParams();
}

function cookieOf(request: Request, name: string): string | undefined {
  for (const part of (request.headers.get("cookie") ?? "").split(";")) {
    const [key, ...value] = part.trim().split("=");
    if (key === name) return value.join("=");
  }
  return undefined;
}

function htmlResponse(status: number, markup: Html, token: string | undefined, path: string): Response {
  const headers = new Headers({ ...SECURITY_HEADERS, "content-type": "text/html; charset=utf-8" });
  // The cookie is the page's token too: forms post it back, and the two must match.
  if (token !== undefined)
    headers.set("set-cookie", `${CSRF_COOKIE}=${token}; Path=${path || "/"}; HttpOnly; SameSite=Strict`);
  return new Response(markup.text, { status, headers });
}

function json(value: unknown): Response {
  return jsonStatus(200, value);
}

function jsonStatus(status: number, value: unknown): Response {
  return new Response(JSON.stringify(value), {
    status,
    headers: { ...SECURITY_HEADERS, "content-type": "application/json; charset=utf-8" },
  });
}

function text(status: number, message: string): Response {
  return new Response(message, {
    status,
    headers: { ...SECURITY_HEADERS, "content-type": "text/plain; charset=utf-8" },
  });
}

function asset(body: string, type: string): Response {
  return new Response(body, {
    headers: { ...SECURITY_HEADERS, "content-type": type, "cache-control": "private, max-age=300" },
  });
}

function redirect(location: string): Response {
  return new Response(null, { status: 303, headers: { ...SECURITY_HEADERS, location } });
}
