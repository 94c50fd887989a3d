import { randomBytes } from "node:crypto";
import type { Reconciler } from "../reconcile/create-reconciler.js";
import { optionError } from "../shared/errors.js";
import { type KnownKeys, rejectUnknownKeys } from "../shared/option-keys.js";
import { type Admin, AdminError, type NotificationFilter } from "./admin.js";
import { csrfCookie, csrfCookieOf, csrfTokens, foreignOrigin, principalOf, servedOverHttps } from "./csrf.js";
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
import { reconcilePage } from "./reconcile-page.js";

export interface ConsoleHandlerOptions {
  admin: Admin;
  /**
   * Decides whether a request may see the console: your own session, SSO header or basic-auth check.
   * Required: there is no open mode. A string lets the request in as that principal (a user or
   * session id), to which the console binds its CSRF tokens; `true` lets it in, the tokens then bound
   * to the credentials it carries (its `Authorization` header and cookies). Falsy (or a throw)
   * answers 401 and shows nothing; a `Response` is answered as it is (a redirect to your login page,
   * a 401 with `WWW-Authenticate: Basic`).
   */
  authorize: (request: Request) => boolean | string | Response | Promise<boolean | string | Response>;
  /** Where the console is mounted; every link and form starts with it. Default `/console`. */
  basePath?: string;
  /** Hide every action and refuse every POST (403). Default false. */
  readOnly?: boolean;
  /**
   * Key of the CSRF tokens. Default: random per process; give the same one to every instance behind
   * one load balancer, so a page served by one is accepted by another.
   */
  csrfSecret?: string | Uint8Array;
  /** The reconciler (`merchant-webhooks/reconcile`) whose kept run reports the console lists at `/reconcile`. */
  reconcile?: Pick<Reconciler, "reports">;
}

const CONSOLE_KEYS: KnownKeys<ConsoleHandlerOptions> = {
  admin: true,
  authorize: true,
  basePath: true,
  readOnly: true,
  csrfSecret: true,
  reconcile: true,
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

/**
 * The notification console: server-rendered pages over `admin`, behind `authorize`. Pages:
 * overview, the list with filters and cursor pages, a notification's timeline, a subscription's ordered
 * history, dead letters with bulk redrive; and the same data as JSON under `/api`. Every action is a
 * POST from the console's own origin carrying the CSRF token the page was served with, issued to the
 * same principal and not expired (403 otherwise).
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
  const csrf = csrfTokens(secret, base);

  const handler = async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    if (url.pathname !== base && !url.pathname.startsWith(`${base}/`)) return text(404, "not found");
    let allowed: boolean | string | Response = false;
    try {
      allowed = await authorize(request);
    } catch {
      allowed = false;
    }
    if (allowed instanceof Response) return allowed;
    if (allowed !== true && (typeof allowed !== "string" || allowed === "")) return text(401, "unauthorized");
    const visitor: Visitor = { principal: principalOf(request, allowed), https: servedOverHttps(request, url) };
    const path = url.pathname.slice(base.length) || "/";
    try {
      if (request.method === "POST") return await act(request, url, path, visitor);
      if (request.method !== "GET" && request.method !== "HEAD") return text(405, "method not allowed");
      return await show(request, url, path, visitor);
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
    return htmlResponse(status, markup, undefined);
  }

  async function show(request: Request, url: URL, path: string, visitor: Visitor): Promise<Response> {
    if (path === "/assets/console.js") return asset(CONSOLE_SCRIPT, "text/javascript; charset=utf-8");
    if (path === "/assets/console.css") return asset(CONSOLE_STYLE, "text/css; charset=utf-8");
    if (path === "/assets/icon.svg") return asset(CONSOLE_ICON, "image/svg+xml");
    const query = url.searchParams;
    const token = readOnly ? undefined : csrf.current(csrfCookieOf(request, visitor.https), visitor.principal);
    const ctx: PageContext = { base, csrf: token, ...(options.reconcile ? { reconcile: true as const } : {}) };
    const notice = noticeOf(query);
    if (notice) ctx.notice = notice;
    const cookie = token === undefined ? undefined : csrfCookie(token, visitor.https, base);
    const page = (markup: Html, status = 200) => htmlResponse(status, markup, cookie);
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
    if (options.reconcile && path === "/api/reconcile") return json(await options.reconcile.reports(limit));
    if (options.reconcile && path === "/reconcile")
      return page(reconcilePage(ctx, await options.reconcile.reports(limit)));
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
      const [found, heldBy] = await Promise.all([
        admin.listNotifications({ subscriptionId: key, limit: 500 }),
        admin.heldBy(key),
      ]);
      return page(subscriptionPage(ctx, key, found.items, heldBy));
    }
    if (path === "/dead-letters") {
      const deadFilter: NotificationFilter = { ...filter, state: "failed" };
      const found = await admin.listNotifications({ ...deadFilter, limit, ...(cursor ? { cursor } : {}) });
      const matched = query.get("matched");
      const stale = query.get("stale");
      const dryRun =
        matched !== null && /^\d+$/.test(matched)
          ? { matched: Number(matched), ...(stale !== null && /^\d+$/.test(stale) ? { stale: Number(stale) } : {}) }
          : undefined;
      return page(deadLettersPage(ctx, deadFilter, found.items, found.cursor, dryRun));
    }
    return text(404, "not found");
  }

  async function act(request: Request, url: URL, path: string, visitor: Visitor): Promise<Response> {
    if (readOnly) return text(403, "the console is read-only");
    // A page of another origin (a sibling subdomain too) can make the browser post: refused first.
    if (foreignOrigin(request, url)) return text(403, "refused: the form was not posted from the console's own pages");
    const form = await formOf(request);
    const sent = form.get("csrf") ?? "";
    const cookie = csrfCookieOf(request, visitor.https);
    // The token must be one this console issued to this principal, unexpired, and the one in this
    // browser's cookie: a page on another site can make the browser post, but can read neither.
    if (sent === "" || cookie === undefined || sent !== cookie || !csrf.valid(sent, visitor.principal))
      return text(403, "missing or wrong CSRF token; reload the page and try again");
    const done = (notice: NoticeKey, to: string, counts?: { n: number; of: number }) =>
      redirect(`${to}${to.includes("?") ? "&" : "?"}${new URLSearchParams({ done: notice, ...countsOf(counts) })}`);
    const id = form.get("id") ?? "";
    const back = `${base}/notifications/${encodeURIComponent(id)}`;
    if (path === "/actions/redrive") {
      const mode = form.get("mode");
      if (mode === "ids") {
        const ids = form.getAll("id").filter((value) => value !== "");
        if (ids.length === 0) return done("nothing-selected", `${base}/dead-letters`);
        const result = await admin.redrive({ ids });
        const to = ids.length === 1 ? `${base}/notifications/${encodeURIComponent(ids[0]!)}` : `${base}/dead-letters`;
        return done("redriven", to, { n: result.redriven, of: result.matched });
      }
      const filter = filterOf(form);
      if (mode === "dry-run") {
        const result = await admin.redrive({ filter, dryRun: true });
        const stale = String(result.staleIfRedriven?.length ?? 0);
        return redirect(
          `${base}/dead-letters${searchOf({ ...stringsOf(filter), matched: String(result.matched), stale })}`,
        );
      }
      const result = await admin.redrive({ filter });
      return done("redriven-matching", `${base}/dead-letters`, { n: result.redriven, of: result.matched });
    }
    if (path === "/actions/replay") {
      const result = await admin.replay(id).catch((err: unknown) => {
        // Nothing to replay from (no recording, no dead letter): said on the notification's page.
        if (err instanceof AdminError && err.code === "MW_ADMIN_NOT_FOUND") return { status: "nothing" as const };
        throw err;
      });
      return done(`replay-${result.status}`, back);
    }
    if (path === "/actions/discard") {
      const result = await admin.discard(id, { reason: form.get("reason") ?? "" });
      return done(result.discarded ? "discarded" : "not-discarded", back);
    }
    return text(404, "no such action");
  }

  return Object.assign(handler, { basePath: base });
}

/** Who is asking, as the CSRF tokens and the cookie need it. */
interface Visitor {
  principal: string;
  https: boolean;
}

/**
 * The console's own notices, by key: `?done=` names one (with counts for a redrive), and any other
 * text is ignored, so a link cannot make the console say what it did not.
 */
const NOTICES = {
  "nothing-selected": () => ({ text: "nothing selected", bad: true }),
  redriven: (n: number, of: number) => ({ text: `redriven ${n} of ${of}${skippedText(n, of)}`, bad: n === 0 }),
  "redriven-matching": (n: number, of: number) => ({
    text: `redriven ${n} of ${of} matching${skippedText(n, of)}`,
    bad: n < of,
  }),
  "replay-completed": () => ({ text: "Already processed: not replayed.", bad: false }),
  "replay-queued": () => ({ text: "Put back to work.", bad: false }),
  "replay-busy": () => ({ text: "Being processed now; try again later.", bad: true }),
  "replay-nothing": () => ({ text: "nothing to replay from: no recording and no failed job", bad: true }),
  discarded: () => ({ text: "Discarded.", bad: false }),
  "not-discarded": () => ({
    text: "Not discarded: it is completed, waiting its turn, or being processed.",
    bad: true,
  }),
} satisfies Record<string, (n: number, of: number) => { text: string; bad: boolean }>;
type NoticeKey = keyof typeof NOTICES;

/** The skipped ones' reasons name ids and records: the link carries none, each notification's page says why. */
const skippedText = (n: number, of: number) =>
  n < of ? `; ${of - n} skipped: each one's page says why (completed, waiting its turn, nothing to run)` : "";

const COUNT = /^\d{1,9}$/;

function noticeOf(query: URLSearchParams): { text: string; bad: boolean } | undefined {
  const key = query.get("done");
  if (key === null || !Object.hasOwn(NOTICES, key)) return undefined;
  const count = (name: string) => (COUNT.test(query.get(name) ?? "") ? Number(query.get(name)) : 0);
  return NOTICES[key as NoticeKey](count("n"), count("of"));
}

const countsOf = (counts: { n: number; of: number } | undefined): Record<string, string> =>
  counts ? { n: String(counts.n), of: String(counts.of) } : {};

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

function htmlResponse(status: number, markup: Html, cookie: string | undefined): Response {
  const headers = new Headers({ ...SECURITY_HEADERS, "content-type": "text/html; charset=utf-8" });
  // The cookie is the page's token too: forms post it back, and the two must match.
  if (cookie !== undefined) headers.set("set-cookie", cookie);
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
