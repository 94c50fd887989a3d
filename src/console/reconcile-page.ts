import type { ReconcileGap, ReconcileReport } from "../reconcile/report.js";
import { type Html, html } from "./html.js";
import { layout, type PageContext } from "./pages.js";

/** One line per gap: what was found, and whether a repair ran for it. */
function gapLine(gap: ReconcileGap): Html {
  switch (gap.kind) {
    case "order_status":
      return html`<li>order ${gap.order_id} (${gap.reference_id}) is ${gap.status} with no processed event${gap.repaired ? html` <span class="state state-completed">repaired</span>` : ""}</li>`;
    case "renewal_overdue":
      return html`<li>subscription ${gap.subscription_id}: renewal due ${gap.expected_at} not received; last ${gap.last_notification.event_type} ${gap.last_notification.id}</li>`;
    case "settlement_unmatched":
      return html`<li>order ${gap.order_id} settled (record ${gap.record_key}) with no processed event</li>`;
  }
}

const count = (report: ReconcileReport, kind: ReconcileGap["kind"]) =>
  report.gaps.filter((gap) => gap.kind === kind).length;

/** The reconciler's kept reports, newest first: a row per run, then each run's gaps and errors. */
export function reconcilePage(ctx: PageContext, reports: readonly ReconcileReport[]): Html {
  const rows = reports.map(
    (report) =>
      html`<tr><td><a href="#run-${report.run_id}">${report.started_at}</a></td><td>${report.mode}</td><td>${report.status}${report.resumed_from ? " (resumed)" : ""}</td><td class="num">${report.checked.orders}</td><td class="num">${report.checked.subscriptions}</td><td class="num">${report.checked.settlements ?? "–"}</td><td class="num">${count(report, "order_status")}</td><td class="num">${count(report, "renewal_overdue")}</td><td class="num">${count(report, "settlement_unmatched")}</td><td class="num">${report.repaired}</td><td class="num">${report.errors.length}</td></tr>`,
  );
  const details = reports
    .filter((report) => report.gaps.length > 0 || report.errors.length > 0)
    .map(
      (report) =>
        html`<section id="run-${report.run_id}"><h2>${report.mode} run ${report.run_id}, ${report.started_at}</h2>
<p class="muted">Orders created ${report.window.from} to ${report.window.to}.</p>
${report.gaps.length > 0 ? html`<ul>${report.gaps.map(gapLine)}</ul>` : ""}
${report.errors.length > 0 ? html`<ul>${report.errors.map((error) => html`<li class="bad">error: ${error.kind} ${error.id}: ${error.message}</li>`)}</ul>` : ""}
</section>`,
    );
  return layout(
    ctx,
    "Reconciliation",
    html`<h1>Reconciliation runs</h1>
${
  reports.length === 0
    ? html`<p class="muted">No run has finished yet.</p>`
    : html`<table><thead><tr><th>started</th><th>mode</th><th>status</th><th>orders</th><th>subscriptions</th><th>settlements</th><th>order gaps</th><th>renewals overdue</th><th>settlements unmatched</th><th>repaired</th><th>errors</th></tr></thead><tbody>${rows}</tbody></table>`
}
${details}`,
  );
}
