import type { NotificationDetail, NotificationFilter, NotificationSummary, Overview } from "./admin.js";
import { type Html, html, queryString, timeText } from "./html.js";

/** What every page needs to draw its links and its forms. */
export interface PageContext {
  base: string;
  /** The CSRF token every form posts back; undefined when the console is read-only (no forms at all). */
  csrf: string | undefined;
  /** A message from the action just taken (shown once, escaped like everything else). */
  notice?: { text: string; bad?: boolean };
  /** The console shows the reconciler's runs: the page is linked from every page. */
  reconcile?: true;
}

const STATES = ["processing", "queued", "completed", "failed"] as const;

export function layout(ctx: PageContext, title: string, body: Html, options: { refreshSeconds?: number } = {}): Html {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${title} · notifications</title>
<link rel="stylesheet" href="${ctx.base}/assets/console.css">
<link rel="icon" href="${ctx.base}/assets/icon.svg">
<script src="${ctx.base}/assets/console.js" defer></script>
</head>
<body${options.refreshSeconds ? html` data-refresh="${options.refreshSeconds}"` : ""}>
<header><strong>Notifications</strong>
<nav><a href="${ctx.base}/">Overview</a><a href="${ctx.base}/notifications">All</a><a href="${ctx.base}/dead-letters">Dead letters</a>${ctx.reconcile ? html`<a href="${ctx.base}/reconcile">Reconciliation</a>` : ""}</nav>
<form class="inline" method="get" action="${ctx.base}/find"><input name="id" placeholder="notification id" aria-label="notification id"> <button>Find</button></form>
${ctx.csrf === undefined ? html`<span class="muted">read-only</span>` : ""}
</header>
<main>
${ctx.notice ? html`<p class="notice${ctx.notice.bad ? " bad" : ""}" role="status">${ctx.notice.text}</p>` : ""}
${body}
</main>
</body>
</html>`;
}

/** A payload in a box that scrolls: focusable and named, so a keyboard can reach and scroll it. */
const scrollable = (label: string, text: string) =>
  html`<pre tabindex="0" role="region" aria-label="${label}">${text}</pre>`;
const stateBadge = (state: string) => html`<span class="state state-${state}">${state}</span>`;
const notificationLink = (ctx: PageContext, id: string) =>
  html`<a href="${ctx.base}/notifications/${encodeURIComponent(id)}">${id}</a>`;
const subscriptionLink = (ctx: PageContext, item: { subscriptionId?: string; orderKey?: string }) => {
  const key = item.orderKey ?? item.subscriptionId;
  if (key === undefined) return html`<span class="muted">–</span>`;
  return html`<a href="${ctx.base}/subscriptions/${encodeURIComponent(key)}">${item.subscriptionId ?? key}</a>`;
};

/** A hidden CSRF field, for every form that acts. */
const csrfField = (ctx: PageContext) => html`<input type="hidden" name="csrf" value="${ctx.csrf ?? ""}">`;

function actionForm(ctx: PageContext, action: string, fields: Html, button: string, confirm?: string): Html {
  if (ctx.csrf === undefined) return html``;
  return html`<form class="inline" method="post" action="${ctx.base}/actions/${action}"${confirm ? html` data-confirm="${confirm}"` : ""}>${csrfField(ctx)}${fields}<button type="submit">${button}</button></form>`;
}

export function overviewPage(ctx: PageContext, overview: Overview): Html {
  const byType = Object.entries(overview.byEventType).sort((a, b) => b[1] - a[1]);
  const queue = overview.queue;
  return layout(
    ctx,
    "Overview",
    html`<h1>Overview</h1>
<p class="muted">Counted over the ${overview.counted} most recently changed notifications.</p>
<div class="grid">
<section><h2>By state</h2><table><tbody>${STATES.map(
      (state) =>
        html`<tr><td><a href="${ctx.base}/notifications${queryString({ state })}">${stateBadge(state)}</a></td><td class="num">${overview.byState[state] ?? 0}</td></tr>`,
    )}</tbody></table></section>
<section><h2>By event type</h2><table><tbody>${byType.map(
      ([type, count]) =>
        html`<tr><td><a href="${ctx.base}/notifications${queryString({ eventType: type === "(unknown)" ? undefined : type })}">${type}</a></td><td class="num">${count}</td></tr>`,
    )}</tbody></table></section>
<section><h2>Queue${queue ? ` (${queue.kind})` : ""}</h2>${
      queue
        ? html`<table><tbody>
<tr><td>waiting</td><td class="num">${queue.waiting}</td></tr>
<tr><td>active</td><td class="num">${queue.active}</td></tr>
<tr><td>delayed</td><td class="num">${queue.delayed}</td></tr>
<tr><td>dead letters (failed set)</td><td class="num">${queue.failed}</td></tr>
<tr><td>lag (oldest waiting)</td><td class="num">${queue.lagMs === undefined ? "0 s" : `${(queue.lagMs / 1000).toFixed(1)} s`}</td></tr>
</tbody></table>`
        : html`<p class="muted">No durable queue configured (bullmqQueue or pgBossQueue).</p>`
    }</section>
</div>
<h2>Dead letters</h2>
${summaryTable(ctx, overview.deadLetters)}
<p><a href="${ctx.base}/dead-letters">All dead letters →</a></p>`,
  );
}

export function summaryTable(ctx: PageContext, items: NotificationSummary[], options: { select?: boolean } = {}): Html {
  if (items.length === 0) return html`<p class="muted">None.</p>`;
  const select = options.select === true && ctx.csrf !== undefined;
  return html`<table>
<thead><tr>${select ? html`<th><input type="checkbox" data-select-all aria-label="select all"></th>` : ""}<th>id</th><th>state</th><th>event type</th><th>subscription</th><th>attempts</th><th>outcome</th><th>changed</th></tr></thead>
<tbody>${items.map(
    (item) =>
      html`<tr>${select ? html`<td><input type="checkbox" name="id" value="${item.id}" aria-label="select ${item.id}"></td>` : ""}<td>${notificationLink(ctx, item.id)}</td><td>${stateBadge(item.state)}</td><td>${item.eventType ?? ""}</td><td>${subscriptionLink(ctx, item)}</td><td class="num">${item.attempts}</td><td>${item.outcome ?? ""}</td><td>${timeText(item.updatedAt)}</td></tr>`,
  )}</tbody>
</table>`;
}

function filterForm(ctx: PageContext, path: string, filter: NotificationFilter, withState: boolean): Html {
  return html`<form class="filters" method="get" action="${ctx.base}${path}">
${
  withState
    ? html`<label>state<select name="state"><option value="">any</option>${STATES.map(
        (state) => html`<option${filter.state === state ? html` selected` : ""}>${state}</option>`,
      )}</select></label>`
    : ""
}
<label>event type<input name="eventType" value="${filter.eventType ?? ""}"></label>
<label>subscription<input name="subscriptionId" value="${filter.subscriptionId ?? ""}"></label>
<label>since<input name="since" value="${filter.since ?? ""}" placeholder="2026-11-26T00:00:00Z"></label>
<label>until<input name="until" value="${filter.until ?? ""}"></label>
<button>Filter</button>
</form>`;
}

export function listPage(
  ctx: PageContext,
  filter: NotificationFilter,
  items: NotificationSummary[],
  next: string | undefined,
): Html {
  return layout(
    ctx,
    "Notifications",
    html`<h1>Notifications</h1>
${filterForm(ctx, "/notifications", filter, true)}
${items.length === 0 && next ? html`<p class="muted">None among the records read so far; older ones are on the next pages.</p>` : summaryTable(ctx, items)}
${next ? html`<p><a rel="next" href="${ctx.base}/notifications${queryString({ ...stringFilter(filter), cursor: next })}">Next page →</a></p>` : ""}`,
  );
}

export function deadLettersPage(
  ctx: PageContext,
  filter: NotificationFilter,
  items: NotificationSummary[],
  next: string | undefined,
  dryRun?: { matched: number; stale?: number },
): Html {
  const fields = html`${Object.entries(stringFilter(filter)).map(
    ([name, value]) => html`<input type="hidden" name="${name}" value="${value ?? ""}">`,
  )}`;
  const bulk =
    ctx.csrf === undefined
      ? html``
      : dryRun
        ? html`<p class="notice" role="status">${dryRun.matched} dead letter${dryRun.matched === 1 ? " matches" : "s match"} this filter.</p>
${dryRun.stale ? html`<p class="notice bad" role="status">${dryRun.stale} of them will be stale if redriven: a newer notification of their subscription completed since, so they go to onStale, not their handler.</p>` : ""}
${dryRun.matched > 0 ? actionForm(ctx, "redrive", html`${fields}<input type="hidden" name="mode" value="filter">`, `Redrive all ${dryRun.matched}`, `Redrive ${dryRun.matched} dead letters?`) : ""}`
        : actionForm(
            ctx,
            "redrive",
            html`${fields}<input type="hidden" name="mode" value="dry-run">`,
            "Count matches for a bulk redrive",
          );
  return layout(
    ctx,
    "Dead letters",
    html`<h1>Dead letters</h1>
${filterForm(ctx, "/dead-letters", filter, false)}
${bulk}
${
  ctx.csrf === undefined
    ? summaryTable(ctx, items)
    : html`<form method="post" action="${ctx.base}/actions/redrive" data-confirm="Redrive the selected dead letters?">${csrfField(ctx)}<input type="hidden" name="mode" value="ids">
${summaryTable(ctx, items, { select: true })}${items.length > 0 ? html`<button type="submit">Redrive selected</button>` : ""}</form>`
}
${next ? html`<p><a rel="next" href="${ctx.base}/dead-letters${queryString({ ...stringFilter(filter), cursor: next })}">Next page →</a></p>` : ""}`,
  );
}

export function notificationPage(ctx: PageContext, detail: NotificationDetail): Html {
  const record = detail.record;
  // Still on its way: its record is, or its job is (a redriven job waits for a worker, its record still failed).
  const jobLive = detail.job !== undefined && !["completed", "failed"].includes(detail.job.state);
  const moving =
    record?.state === "queued" || record?.state === "processing" || (jobLive && record?.state !== "completed");
  const id = html`<input type="hidden" name="id" value="${detail.id}">`;
  const actions =
    ctx.csrf === undefined || record?.state === "completed"
      ? html``
      : html`<section><h2>Actions</h2>
${staleWarning(detail)}
${record?.state === "failed" || detail.job?.state === "failed" ? actionForm(ctx, "redrive", html`${id}<input type="hidden" name="mode" value="ids">`, "Redrive", detail.ordering?.staleIfRedriven ? "It will be stale: it goes to onStale, not its handler. Redrive anyway?" : "Run this notification again?") : ""}
${detail.recording ? actionForm(ctx, "replay", id, "Replay from recording", "Replay this notification through claim and ordering?") : ""}
${record ? actionForm(ctx, "discard", html`${id}<input name="reason" required placeholder="reason (kept for audit)" aria-label="reason">`, "Discard", "Mark this notification resolved by hand?") : ""}
</section>`;
  const job = detail.job;
  return layout(
    ctx,
    detail.id,
    html`<h1>${detail.id}</h1>
<table><tbody>
<tr><th>state</th><td>${record ? stateBadge(record.state) : html`<span class="muted">no record</span>`}</td></tr>
<tr><th>event type</th><td>${detail.eventType ?? ""}</td></tr>
<tr><th>subscription</th><td>${subscriptionLink(ctx, { ...(detail.subscriptionId !== undefined ? { subscriptionId: detail.subscriptionId } : {}), ...(detail.ordering ? { orderKey: detail.ordering.key } : {}) })}</td></tr>
<tr><th>attempts</th><td>${record?.attempts ?? ""}</td></tr>
<tr><th>outcome</th><td>${record?.outcome ?? ""}</td></tr>
${record?.leaseUntil ? html`<tr><th>lease until</th><td>${timeText(record.leaseUntil)}</td></tr>` : ""}
</tbody></table>
${actions}
<h2>Timeline</h2>
<ol class="timeline">${detail.timeline.map(
      (event) =>
        html`<li class="${event.what}"><strong>${event.what}</strong> <span class="muted">${timeText(event.at)}</span>${event.detail ? html` — ${event.detail}` : ""}</li>`,
    )}</ol>
${
  detail.ordering
    ? html`<h2>Ordering</h2><table><tbody>
<tr><th>order key</th><td>${subscriptionLink(ctx, { orderKey: detail.ordering.key })}</td></tr>
<tr><th>its position</th><td>${detail.ordering.position ?? ""}</td></tr>
<tr><th>newest completed</th><td>${detail.ordering.newestCompleted ?? ""}</td></tr>
<tr><th>waiting</th><td>${detail.ordering.waiting.join(", ")}</td></tr>
${detail.ordering.heldBy !== undefined ? html`<tr><th>held by</th><td>${notificationLink(ctx, detail.ordering.heldBy)} <span class="muted">(a dead letter: the rest wait until it is redriven or discarded)</span></td></tr>` : ""}
</tbody></table>`
    : ""
}
<h2>Job</h2>
${
  job
    ? html`<table><tbody>
<tr><th>state</th><td>${job.state}</td></tr>
<tr><th>attempts made</th><td>${job.attemptsMade}</td></tr>
<tr><th>queued</th><td>${timeText(job.queuedAt)}</td></tr>
<tr><th>last run</th><td>${timeText(job.processedAt)}</td></tr>
<tr><th>payload</th><td>${job.sealed ? html`<strong>sealed</strong> <span class="muted">(encrypted with the queue's key; not shown)</span>` : "in clear, redacted below"}</td></tr>
</tbody></table>
${job.notification !== undefined ? scrollable("Job payload", JSON.stringify(job.notification, null, 2)) : ""}`
    : html`<p class="muted">No job.</p>`
}
<h2>Recorded request</h2>
${
  detail.recording
    ? html`<p class="muted">Received ${detail.recording.received_at}; answered ${detail.recording.answer.status} ${detail.recording.answer.message}</p>
<h3>Headers kept</h3>${scrollable("Headers kept", JSON.stringify(detail.recording.headers, null, 2))}
<h3>Body (redacted)</h3>${scrollable("Body (redacted)", JSON.stringify(detail.recording.notification, null, 2))}`
    : html`<p class="muted">No recording.</p>`
}`,
    moving ? { refreshSeconds: 2 } : {},
  );
}

/** Said before a redrive, not after: a dead letter older than a notification of its subscription completed since. */
function staleWarning(detail: NotificationDetail): Html {
  const newer = detail.ordering?.staleIfRedriven;
  if (newer === undefined || detail.record?.state !== "failed") return html``;
  return html`<p class="notice bad" role="status">Stale if redriven: a newer notification of its subscription (position ${newer}) completed since, so a redrive sends it to onStale, not its handler.</p>`;
}

export function subscriptionPage(ctx: PageContext, key: string, items: NotificationSummary[], heldBy?: string): Html {
  const byPosition = [...items].sort((a, b) => ((a.position ?? "") < (b.position ?? "") ? -1 : 1));
  const stale = byPosition.filter((item) => item.state === "completed" && item.outcome?.startsWith("stale"));
  const waiting = byPosition.filter((item) => item.state === "queued" || item.state === "processing");
  return layout(
    ctx,
    key,
    html`<h1>Subscription ${key}</h1>
${heldBy !== undefined ? html`<p class="notice bad" role="status">Held: dead letter ${notificationLink(ctx, heldBy)} holds this subscription's lane (ordering.onDeadLetter "hold"); the notifications behind it wait, neither run nor stale, until it is redriven (it runs first) or discarded.</p>` : ""}
<h2>History, in order</h2>${summaryTable(ctx, byPosition)}
<h2>Stale</h2>${summaryTable(ctx, stale)}
<h2>Waiting</h2>${summaryTable(ctx, waiting)}`,
  );
}

export function messagePage(
  ctx: PageContext,
  title: string,
  text: string,
  back?: { href: string; text: string },
): Html {
  return layout(
    ctx,
    title,
    html`<h1>${title}</h1><p>${text}</p>${back ? html`<p><a href="${back.href}">${back.text}</a></p>` : ""}`,
  );
}

function stringFilter(filter: NotificationFilter): Record<string, string | undefined> {
  return {
    state: filter.state,
    eventType: filter.eventType,
    subscriptionId: filter.subscriptionId,
    since: filter.since === undefined ? undefined : String(filter.since),
    until: filter.until === undefined ? undefined : String(filter.until),
  };
}
