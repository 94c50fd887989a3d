/**
 * HTML built by a tagged template that escapes every value put into it: a value is text unless it is
 * markup this module made (`Html`), so nothing from a notification, a store or a query string can
 * add an element or an attribute, inside text or inside a quoted attribute alike.
 */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

export function escapeHtml(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

type Part = Html | string | number | boolean | undefined | null | readonly Part[];

function render(part: Part): string {
  if (part === undefined || part === null || part === false) return "";
  if (part instanceof Html) return part.text;
  if (Array.isArray(part)) return part.map(render).join("");
  return escapeHtml(part);
}

export function html(strings: TemplateStringsArray, ...values: Part[]): Html {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += render(values[i]!) + strings[i + 1]!;
  return new Html(out);
}

/** A query string from the defined, non-empty values (each encoded). */
export function queryString(values: Record<string, string | number | undefined>): string {
  const pairs = Object.entries(values).filter(([, v]) => v !== undefined && v !== "");
  return pairs.length === 0
    ? ""
    : `?${pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`).join("&")}`;
}

export function timeText(ms: number | undefined): string {
  return ms === undefined || !Number.isFinite(ms) || ms <= 0 ? "" : new Date(ms).toISOString().replace(".000Z", "Z");
}

/**
 * The page's script, served from the console's own path (`script-src 'self'`, no inline script): asks
 * before an action, and refreshes a page whose notification is still moving.
 */
export const CONSOLE_SCRIPT = `"use strict";
document.addEventListener("submit", function (event) {
  var form = event.target;
  var question = form && form.getAttribute("data-confirm");
  if (question && !window.confirm(question)) event.preventDefault();
});
(function () {
  var body = document.body;
  var seconds = Number(body && body.getAttribute("data-refresh"));
  if (seconds > 0) setTimeout(function () { window.location.reload(); }, seconds * 1000);
})();
document.addEventListener("click", function (event) {
  var target = event.target;
  if (!target || !target.matches || !target.matches("[data-select-all]")) return;
  var boxes = document.querySelectorAll("input[name=id]");
  for (var i = 0; i < boxes.length; i++) boxes[i].checked = target.checked;
});
`;

/**
 * The console's style. Every colour pair meets WCAG 2.1 AA (4.5:1 for text) in both schemes, the
 * background set rather than left to the browser so the contrast is what was measured:
 * light muted #595959 7.0, bad 6.0, good 5.9, warn 6.3, links 6.4; dark muted 7.7, bad 8.2, good 11.1,
 * warn 11.4, links 8.9. test/console/browser.test.ts checks every screen with axe-core in both.
 */
export const CONSOLE_STYLE = `:root { color-scheme: light dark; --bg: #fff; --fg: #1b1b1b; --line: #8884; --muted: #595959; --bad: #b03a2e; --good: #1b7340; --warn: #8a5300; --link: #0b57d0; --visited: #6a1b9a; }
@media (prefers-color-scheme: dark) { :root { --bg: #121212; --fg: #e6e6e6; --muted: #a6a6a6; --bad: #ff8a80; --good: #6fdc9c; --warn: #f4c26b; --link: #8ab4f8; --visited: #d7aefb; } }
* { box-sizing: border-box; }
html { background: var(--bg); color: var(--fg); }
body { font: 14px/1.45 system-ui, sans-serif; margin: 0; }
a { color: var(--link); } a:visited { color: var(--visited); }
:focus-visible { outline: 2px solid var(--link); outline-offset: 2px; }
header { display: flex; gap: 1.5rem; align-items: baseline; padding: .75rem 1.25rem; border-bottom: 1px solid var(--line); }
header strong { font-size: 1rem; }
header nav a { margin-right: 1rem; }
main { padding: 1rem 1.25rem 3rem; max-width: 80rem; }
h1 { font-size: 1.3rem; margin: .2rem 0 1rem; word-break: break-all; }
h2 { font-size: 1.05rem; margin: 1.5rem 0 .5rem; }
table { border-collapse: collapse; width: 100%; margin-bottom: 1rem; }
th, td { text-align: left; padding: .35rem .6rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-weight: 600; color: var(--muted); font-size: .85rem; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
code, pre { font: 12.5px/1.4 ui-monospace, monospace; }
pre { padding: .75rem; border: 1px solid var(--line); border-radius: 4px; overflow: auto; max-height: 28rem; }
.state { display: inline-block; padding: 0 .45rem; border-radius: 3px; font-size: .8rem; border: 1px solid currentColor; }
.state-failed { color: var(--bad); } .state-completed { color: var(--good); } .state-queued, .state-processing { color: var(--warn); }
.muted { color: var(--muted); }
.notice { padding: .6rem .8rem; border: 1px solid var(--line); border-left: 4px solid var(--good); margin-bottom: 1rem; }
.notice.bad { border-left-color: var(--bad); }
form.inline { display: inline-block; margin: 0 .5rem .5rem 0; }
form.filters { display: flex; gap: .5rem; flex-wrap: wrap; align-items: end; margin-bottom: 1rem; }
form.filters label { display: flex; flex-direction: column; font-size: .8rem; color: var(--muted); }
input, select, button { font: inherit; padding: .25rem .45rem; }
button { cursor: pointer; }
ol.timeline { list-style: none; padding: 0; border-left: 2px solid var(--line); margin-left: .4rem; }
ol.timeline li { padding: .2rem 0 .6rem 1rem; position: relative; }
ol.timeline li::before { content: ""; position: absolute; left: -6px; top: .55rem; width: 10px; height: 10px; border-radius: 50%; background: var(--muted); }
ol.timeline li.failed::before { background: var(--bad); } ol.timeline li.completed::before { background: var(--good); }
.grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(16rem, 1fr)); gap: 1rem; }
`;

/** The tab's icon, served from the console's path so a browser does not ask the app for /favicon.ico. */
export const CONSOLE_ICON = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#1e8449"/><path d="M4 8.5l2.5 2.5L12 5.5" stroke="#fff" stroke-width="2" fill="none"/></svg>`;
