// Audit-log search: the SQLite audit trail by symbol, type, severity and exchange-time range.
import { Alert, api } from "../api";
import { el, Page } from "../dom";
import { alertTypes, t, typeLabel } from "../i18n";
import { alertRow } from "./alerts";

export const auditPage: Page = (root) => {
  const sym = el("input", { size: 10, placeholder: "AAPL", "data-testid": "audit-symbol" });
  const type = el("select", { "data-testid": "audit-type" }, el("option", { value: "" }, t("any")),
    ...alertTypes.map((x) => el("option", { value: x }, typeLabel(x))));
  const sev = el("select", {}, el("option", { value: "" }, t("any")),
    ...["info", "warning", "critical"].map((x) => el("option", { value: x }, t(x as "info"))));
  const since = el("input", { type: "datetime-local", step: 1 });
  const until = el("input", { type: "datetime-local", step: 1 });
  const limit = el("input", { type: "number", value: 200, min: 1, max: 5000, size: 5 });
  const msg = el("div", { class: "note", "data-testid": "audit-message" });
  const body = el("tbody", { "data-testid": "audit-results" });
  const search = (e?: Event) => {
    e?.preventDefault();
    const q = new URLSearchParams();
    if (sym.value.trim()) q.set("symbol", sym.value.trim());
    if (type.value) q.set("type", type.value);
    if (sev.value) q.set("severity", sev.value);
    // datetime-local is read as UTC: exchange timestamps are UTC nanoseconds.
    if (since.value) q.set("since_ns", String(BigInt(Date.parse(since.value + "Z")) * 1000000n));
    if (until.value) q.set("until_ns", String(BigInt(Date.parse(until.value + "Z")) * 1000000n));
    q.set("limit", limit.value || "200");
    api<{ alerts: Alert[]; count: number }>(`api/alerts?${q}`).then((r) => {
      msg.className = "note";
      msg.textContent = `${r.count} ${t("results")}`;
      body.replaceChildren(...r.alerts.map((a) => alertRow({ ...a, wall_ms: a.exch_ts_ns / 1e6 })));
    }).catch((err) => { msg.className = "error"; msg.textContent = err.status === 503 ? t("no_audit") : `${t("error")}: ${err.message}`; });
  };
  root.append(el("form", { class: "row", onsubmit: search },
    el("label", {}, t("symbol"), sym), el("label", {}, t("type"), type), el("label", {}, t("severity"), sev),
    el("label", {}, `${t("since")} (UTC)`, since), el("label", {}, `${t("until")} (UTC)`, until), el("label", {}, t("limit"), limit),
    el("button", { "data-testid": "audit-search" }, t("search"))), msg,
    el("div", { class: "panel scroll" }, el("table", {}, body)));
  search();
  return () => {};
};
