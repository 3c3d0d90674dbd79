// Audit-log search: the audit trail by symbol, type, severity and exchange-time range, newest
// first, with column headers, pages (each page asks GET /api/alerts for the alerts older than the
// previous page's last: until_ns, so paging reaches the whole store, not only one answer's 5,000)
// and a CSV export of the page shown. A row opens the alert's detail view.
// The time filters are exchange time in a zone the page shows beside them: the searched symbol's
// exchange zone (from /api/symbols, else what its name implies), else the zone most of the live
// symbols trade in; the zone list offers every zone the feed's symbols have, and UTC.
import { Alert, api, SymbolEntry } from "../api";
import { el, Page } from "../dom";
import { exchNs, fmtExchTime, marketOf, setMarket, valuesText, zonedWallToUtcMs } from "../format";
import { alertTypes, t, typeLabel } from "../i18n";
import { alertHeader, alertRow } from "./alerts";

function csvCell(v: unknown): string {
  const s = v === undefined || v === null ? "" : String(v);
  return /[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export function alertsCsv(alerts: Alert[]): string {
  const head = ["id", "exch_ts_ns", "exchange_time", "time_zone", "symbol", "type", "severity", "price", "values", "latency_ns", "silenced_by"];
  const lines = [head.join(",")];
  for (const a of alerts) {
    const m = marketOf(a.symbol, a);
    lines.push([a.id, String(a.exch_ts_ns), fmtExchTime(exchNs(a), m.time_zone, true), m.time_zone, a.symbol, a.type, a.severity,
      a.price_text ?? a.price, valuesText(a), a.latency_ns?.total ?? "", a.silenced_by ?? ""].map(csvCell).join(","));
  }
  return lines.join("\n") + "\n";
}

export const auditPage: Page = (root) => {
  const sym = el("input", { size: 10, placeholder: "AAPL", "data-testid": "audit-symbol" });
  const type = el("select", { "data-testid": "audit-type" }, el("option", { value: "" }, t("any")),
    ...alertTypes.map((x) => el("option", { value: x }, typeLabel(x))));
  const sev = el("select", {}, el("option", { value: "" }, t("any")),
    ...["info", "warning", "critical"].map((x) => el("option", { value: x }, t(x as "info"))));
  const since = el("input", { type: "datetime-local", step: 1, "data-testid": "audit-since" });
  const until = el("input", { type: "datetime-local", step: 1, "data-testid": "audit-until" });
  const zoneSel = el("select", { "data-testid": "audit-zone" });
  const sinceLabel = el("span", { "data-testid": "audit-since-label" });
  const untilLabel = el("span", {});
  const zones = new Map<string, number>([["UTC", 0]]);  // zone → live symbols trading in it
  let zoneChosen = false;  // picked by hand: the symbol no longer moves it
  const showZone = () => {
    sinceLabel.textContent = `${t("since")} (${zoneSel.value})`;
    untilLabel.textContent = `${t("until")} (${zoneSel.value})`;
  };
  const setZones = (pick: string) => {
    zones.set(pick, zones.get(pick) ?? 0);
    zoneSel.replaceChildren(...[...zones.keys()].sort().map((z) => el("option", { value: z }, z)));
    zoneSel.value = pick;
    showZone();
  };
  const zoneForSymbol = () => {
    const s = sym.value.trim();
    if (zoneChosen) return;
    if (s) return setZones(marketOf(s).time_zone);
    let best = "UTC", n = 0;
    for (const [z, c] of zones) if (c > n) { best = z; n = c; }
    setZones(best);
  };
  setZones("UTC");
  sym.addEventListener("input", zoneForSymbol);
  zoneSel.addEventListener("change", () => { zoneChosen = true; showZone(); });
  api<{ symbols: SymbolEntry[] }>("api/symbols").then((r) => {
    for (const s of r.symbols) {
      setMarket(s.s, s.market);
      const z = s.market?.time_zone;
      if (z) zones.set(z, (zones.get(z) ?? 0) + 1);
    }
    zoneForSymbol();
  }).catch(() => {});
  const limit = el("input", { type: "number", value: 100, min: 1, max: 5000, size: 5, "data-testid": "audit-limit" });
  const msg = el("div", { class: "note", "data-testid": "audit-message" });
  const body = el("tbody", { "data-testid": "audit-results" });
  const pageNo = el("span", { "data-testid": "audit-page" });
  const prevBtn = el("button", { type: "button", "data-testid": "audit-prev" }, t("prev_page"));
  const nextBtn = el("button", { type: "button", "data-testid": "audit-next" }, t("next_page"));
  const csvBtn = el("button", { type: "button", "data-testid": "audit-csv" }, t("export_csv"));
  // cursors[i]: the until_ns that page i was asked with ("" = the search's own upper bound).
  let cursors: string[] = [""];
  let page = 0;
  let shown: Alert[] = [];
  let full = false;

  const query = () => {
    const q = new URLSearchParams();
    if (sym.value.trim()) q.set("symbol", sym.value.trim());
    if (type.value) q.set("type", type.value);
    if (sev.value) q.set("severity", sev.value);
    // The inputs are wall-clock times in the zone shown; the API takes UTC nanoseconds.
    for (const [input, key] of [[since, "since_ns"], [until, "until_ns"]] as const) {
      const ms = input.value ? zonedWallToUtcMs(input.value, zoneSel.value) : NaN;
      if (Number.isFinite(ms)) q.set(key, String(BigInt(ms) * 1000000n));
    }
    if (cursors[page]) q.set("until_ns", cursors[page]);
    q.set("limit", limit.value || "100");
    return q;
  };
  const load = () => {
    api<{ alerts: Alert[]; count: number }>(`api/alerts?${query()}`).then((r) => {
      msg.className = "note";
      shown = r.alerts;
      full = r.count >= Number(limit.value || "100");
      msg.textContent = `${r.count} ${t("results")}${page ? ` (${t("page")} ${page + 1})` : ""}`;
      body.replaceChildren(...r.alerts.map((a) => alertRow(a)));
      pageNo.textContent = ` ${t("page")} ${page + 1} `;
      prevBtn.disabled = page === 0;
      nextBtn.disabled = !full;
      if (!r.alerts.length && page > 0) msg.textContent = t("no_more");
    }).catch((err) => { msg.className = "error"; msg.textContent = err.status === 503 ? t("no_audit") : `${t("error")}: ${err.message}`; });
  };
  const search = (e?: Event) => {
    e?.preventDefault();
    cursors = [""];
    page = 0;
    load();
  };
  prevBtn.addEventListener("click", () => { if (page > 0) { page--; load(); } });
  nextBtn.addEventListener("click", () => {
    if (!shown.length) return;
    // Older than this page's oldest alert (until_ns is exclusive).
    const oldest = shown.reduce((m, a) => (exchNs(a) < exchNs(m) ? a : m), shown[0]);
    cursors[page + 1] = String(oldest.exch_ts_ns);
    page++;
    load();
  });
  csvBtn.addEventListener("click", () => {
    const blob = new Blob([alertsCsv(shown)], { type: "text/csv;charset=utf-8" });
    const a = el("a", { href: URL.createObjectURL(blob), download: `ticksentry-alerts-page${page + 1}.csv` });
    document.body.append(a);
    a.click();
    setTimeout(() => { URL.revokeObjectURL(a.href); a.remove(); }, 1000);
  });
  root.append(el("form", { class: "row", onsubmit: search },
    el("label", {}, t("symbol"), sym), el("label", {}, t("type"), type), el("label", {}, t("severity"), sev),
    el("label", {}, sinceLabel, since), el("label", {}, untilLabel, until), el("label", {}, t("zone"), zoneSel),
    el("label", {}, t("limit"), limit),
    el("button", { "data-testid": "audit-search" }, t("search")), prevBtn, pageNo, nextBtn, csvBtn), msg,
    el("div", { class: "panel scroll" }, el("table", { "data-testid": "audit-table" }, alertHeader(null), body)));
  search();
  return () => {};
};
