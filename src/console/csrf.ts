import { createHash, createHmac, randomBytes } from "node:crypto";
import { constantTimeEqual } from "../verify/constant-time.js";

/**
 * The console's CSRF tokens: `v1.<expiry>.<nonce>.<mac>`, the MAC (HMAC-SHA256 under the console's
 * secret) over the console's base path, the principal, the expiry and the nonce. A token is good
 * only for the principal it was issued to (the string `authorize` returned, or the credentials the
 * request carried), only on this console, and only until it expires: one kept by a user who has
 * since logged out, or planted from a sibling subdomain by another user, is refused.
 */
const VERSION = "v1";
const TOKEN = /^v1\.([0-9a-z]{1,12})\.([A-Za-z0-9_-]{24})\.([A-Za-z0-9_-]{43})$/;
/** How long a token is good for; a page served in its last hour gets a fresh one. */
export const CSRF_LIFETIME_MS = 12 * 60 * 60 * 1000;
const RENEW_BEFORE_MS = 60 * 60 * 1000;

/** The cookie's name: `__Host-` (no Domain, Path `/`, Secure: no sibling can set it) wherever served over HTTPS. */
export const CSRF_COOKIE = "mw_console_csrf";
export const HOST_CSRF_COOKIE = `__Host-${CSRF_COOKIE}`;

export interface CsrfTokens {
  /** A fresh token for `principal`. */
  fresh(principal: string): string;
  /** Whether `token` is well formed, issued by this console to `principal`, and not expired. */
  valid(token: string | undefined, principal: string): boolean;
  /** `token` if still good for a while for `principal`, else a fresh one. */
  current(token: string | undefined, principal: string): string;
}

export function csrfTokens(secret: Uint8Array, base: string): CsrfTokens {
  const sign = (principal: string, expiry: string, nonce: string) =>
    createHmac("sha256", secret)
      .update(`merchant-webhooks console csrf ${VERSION}\0${base}\0${principal}\0${expiry}\0${nonce}`)
      .digest("base64url");
  const parse = (token: string | undefined, principal: string): number | undefined => {
    if (typeof token !== "string") return undefined;
    const parts = TOKEN.exec(token);
    if (!parts) return undefined;
    const [, expiry, nonce, mac] = parts;
    if (!constantTimeEqual(Buffer.from(mac!), Buffer.from(sign(principal, expiry!, nonce!)))) return undefined;
    const expiresAt = Number.parseInt(expiry!, 36);
    return Date.now() < expiresAt ? expiresAt : undefined;
  };
  const fresh = (principal: string) => {
    const expiry = (Date.now() + CSRF_LIFETIME_MS).toString(36);
    const nonce = randomBytes(18).toString("base64url");
    return `${VERSION}.${expiry}.${nonce}.${sign(principal, expiry, nonce)}`;
  };
  return {
    fresh,
    valid: (token, principal) => parse(token, principal) !== undefined,
    current(token, principal) {
      const expiresAt = parse(token, principal);
      return expiresAt !== undefined && expiresAt - Date.now() > RENEW_BEFORE_MS ? token! : fresh(principal);
    },
  };
}

/**
 * Who the tokens are bound to: the string `authorize` returned (a user or session id), else the
 * credentials the request carries: its `Authorization` header and its cookies but the console's own,
 * hashed. Logging out or in again, or another user's browser, changes it.
 */
export function principalOf(request: Request, allowed: true | string): string {
  if (typeof allowed === "string") return `principal:${allowed}`;
  const cookies = (request.headers.get("cookie") ?? "")
    .split(";")
    .map((part) => part.trim())
    .filter((part) => part !== "" && !part.startsWith(`${CSRF_COOKIE}=`) && !part.startsWith(`${HOST_CSRF_COOKIE}=`))
    .sort();
  const credentials = `${request.headers.get("authorization") ?? ""}\0${cookies.join("\0")}`;
  return `credentials:${createHash("sha256").update(credentials).digest("base64url")}`;
}

/**
 * Whether a POST comes from a page of another origin. `Sec-Fetch-Site`, where the browser sends it,
 * decides: anything but `same-origin` is foreign (a sibling subdomain is `same-site`, and refused).
 * Without it, an `Origin` whose host is not the request's (the scheme is not compared: a proxy ending
 * TLS hands the console `http`). `Origin: null` alone is not taken for foreign: Chromium sends it for
 * the console's own forms, whose pages say `Referrer-Policy: no-referrer`; the token still decides.
 */
export function foreignOrigin(request: Request, url: URL): boolean {
  const site = request.headers.get("sec-fetch-site");
  if (site !== null) return site !== "same-origin";
  const origin = request.headers.get("origin");
  if (origin === null || origin === "null") return false;
  try {
    return new URL(origin).host !== url.host;
  } catch {
    return true;
  }
}

/** Whether the console is served over HTTPS, as the request's URL or the proxy in front says. */
export function servedOverHttps(request: Request, url: URL): boolean {
  if (url.protocol === "https:") return true;
  const forwarded = request.headers.get("x-forwarded-proto");
  return forwarded !== null && forwarded.split(",")[0]!.trim().toLowerCase() === "https";
}

/** The `Set-Cookie` value carrying `token`: `__Host-`, `Secure`, Path `/` over HTTPS; else under the console's path. */
export function csrfCookie(token: string, https: boolean, path: string): string {
  const maxAge = Math.floor(CSRF_LIFETIME_MS / 1000);
  return https
    ? `${HOST_CSRF_COOKIE}=${token}; Path=/; Secure; HttpOnly; SameSite=Strict; Max-Age=${maxAge}`
    : `${CSRF_COOKIE}=${token}; Path=${path || "/"}; HttpOnly; SameSite=Strict; Max-Age=${maxAge}`;
}

/** The token in the request's cookie: the `__Host-` one only, over HTTPS. */
export function csrfCookieOf(request: Request, https: boolean): string | undefined {
  const name = https ? HOST_CSRF_COOKIE : CSRF_COOKIE;
  for (const part of (request.headers.get("cookie") ?? "").split(";")) {
    const at = part.indexOf("=");
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return undefined;
}
