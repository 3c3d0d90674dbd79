// One alert at its own time (#/alert/ID), the same from the feed, the symbol page and the audit
// page: the price/volume chart around it in exchange time with the alert marked, the values and
// thresholds as conditions that read true, the book at that moment, the feature row, the model's
// window and probability, and the per-stage latencies.
// Sources: the alert as this page already saw it (feed, symbol page, audit search), completed by
// GET /api/alerts/{id} (feature row, "book", model window); where that endpoint is absent, the
// audit search at the alert's exchange time supplies the feature row. The chart reads
// GET /api/symbols/{s}/history?from_ns=&to_ns= (the live feed's points, exchange time).
import { SeriesMarker, UTCTimestamp } from "lightweight-charts";
import { Alert, api, ApiError, knownAlert, Market, rememberAlert } from "../api";
import { el, Page } from "../dom";
import { exchNs, fmtExchTime, fmtLatency, fmtPlain, fmtPrice, marketOf, setMarket, tickOf, valueView } from "../format";
import { t, typeLabel } from "../i18n";
import { makeChart } from "./charts";

const kAroundNs = 5 * 60 * 1_000_000_000;  // the chart spans ±5 minutes of exchange time

function kv(rows: [string, Node | string][], testid?: string): HTMLElement {
  return el("table", { class: "kv", "data-testid": testid }, el("tbody", {},
    ...rows.map(([k, v]) => el("tr", {}, el("th", {}, k), el("td", {}, v)))));
}

function bookTable(a: Alert, m: Market): HTMLElement {
  const book = a.book;
  if (!book || (!book.bids?.length && !book.asks?.length)) {
    return el("div", { class: "note", "data-testid": "detail-book-none" }, t("book_not_recorded"));
  }
  const rows: HTMLElement[] = [];
  const asks = book.asks ?? [], bids = book.bids ?? [];
  for (let i = asks.length - 1; i >= 0; i--) {
    rows.push(el("tr", { class: "ask" }, el("td", {}, `${t("ask")}${i + 1}`), el("td", { class: "num" }, asks[i].price_text),
      el("td", { class: "num" }, fmtQtyText(asks[i].size_text, m))));
  }
  for (let i = 0; i < bids.length; i++) {
    rows.push(el("tr", { class: "bid" }, el("td", {}, `${t("bid")}${i + 1}`), el("td", { class: "num" }, bids[i].price_text),
      el("td", { class: "num" }, fmtQtyText(bids[i].size_text, m))));
  }
  return el("table", { class: "ladder", "data-testid": "detail-book" },
    el("thead", {}, el("tr", {}, el("th", {}, ""), el("th", { class: "num" }, t("price")), el("th", { class: "num" }, t("qty")))),
    el("tbody", {}, ...rows));
}

function fmtQtyText(text: string, m: Market): string {
  const q = Number(text);
  if (!Number.isFinite(q) || m.lot_size <= 1) return text;
  const lots = q / m.lot_size;
  return `${text} (${fmtPlain(lots)} ${t("lot")})`;
}

export const alertPage: Page = (root, arg) => {
  const id = arg;
  let alive = true;
  const title = el("h2", { "data-testid": "detail-title" }, `${t("alert_detail")} ${id}`);
  const msg = el("div", { class: "note", "data-testid": "detail-message" });
  const summary = el("div", { "data-testid": "detail-summary" });
  const values = el("div", { "data-testid": "detail-values" });
  const chartBox = el("div", { class: "chart", "data-testid": "detail-chart" });
  const chartNote = el("div", { class: "note", "data-testid": "detail-chart-note" });
  const bookBox = el("div", { "data-testid": "detail-book-box" });
  const featBox = el("div", { "data-testid": "detail-features-box" });
  const modelBox = el("div", { "data-testid": "detail-model" });
  root.append(title, msg,
    el("div", { class: "grid" },
      el("div", { class: "panel" }, summary, el("h3", { style: "margin-top:12px" }, t("conditions")), values),
      el("div", { class: "panel" }, el("h3", {}, t("book_at_alert")), bookBox)),
    el("div", { class: "panel", style: "margin-top:16px" }, el("h3", {}, t("chart_around")), chartNote, chartBox),
    el("div", { class: "grid", style: "margin-top:16px" },
      el("div", { class: "panel" }, el("h3", {}, t("feature_row")), featBox),
      el("div", { class: "panel" }, el("h3", {}, t("model")), modelBox)));

  let chart: ReturnType<typeof makeChart> | null = null;
  let drawnFor = "";
  let market: Market | null = null;

  const draw = (a: Alert, m: Market) => {
    const ns = exchNs(a);
    title.replaceChildren(`${typeLabel(a.type)} · `, el("a", { href: `#/symbol/${encodeURIComponent(a.symbol)}` }, a.symbol),
      el("span", { class: `sev-${a.severity}` }, ` · ${t(a.severity as "info")}`));
    const tick = tickOf(a, m);
    summary.replaceChildren(kv([
      ["id", String(a.id)],
      [t("exchange_time"), el("span", { "data-testid": "detail-time" }, fmtExchTime(ns, m.time_zone, true))],
      [t("price"), el("span", { "data-testid": "detail-price" }, fmtPrice(a.price, m.price_decimals) + (m.currency ? ` ${m.currency}` : ""))],
      [t("latency"), `${fmtLatency(a.latency_ns?.total)}  (${["book", "features", "detect", "emit"].map((s) =>
        `${t(s as "book")} ${fmtLatency((a.latency_ns as Record<string, number>)?.[s])}`).join(" · ")})`],
      ...(a.silenced_by ? [[t("silenced"), a.silenced_by] as [string, string]] : []),
    ]));
    values.replaceChildren(el("table", { "data-testid": "detail-values-table" },
      el("thead", {}, el("tr", {}, el("th", {}, t("name_col")), el("th", { class: "num" }, t("condition_value")), el("th", {}, t("condition")))),
      el("tbody", {}, ...a.values.map((v) => {
        const w = valueView(v, m, tick);
        return el("tr", { "data-testid": "detail-value", "data-name": v.name, "data-holds": String(w.holds) },
          el("td", { title: v.name }, w.label), el("td", { class: "num" }, w.value),
          el("td", {}, w.condition ? `${w.condition} ✓` : ""));
      }))));
    bookBox.replaceChildren(bookTable(a, m));
    const f = a.features;
    featBox.replaceChildren(f && Object.keys(f).length
      ? el("table", { class: "kv", "data-testid": "detail-features" }, el("tbody", {},
        ...Object.entries(f).map(([k, v]) => el("tr", { "data-testid": "feature-row" }, el("th", {}, k),
          el("td", { class: "num" }, v === null ? "–" : fmtPlain(v))))))
      : el("div", { class: "note", "data-testid": "detail-features-none" }, t("no_features")));
    const model = a.model;
    const win = (a.model_window ?? (model as Record<string, unknown> | undefined)?.window) as unknown;
    const modelRows: [string, Node | string][] = [];
    if (model) {
      modelRows.push([t("model_version"), `${model.name} v${model.version}${model.shadow ? ` (${t("shadow")})` : ""}`]);
      modelRows.push([t("probability_col"), el("span", { "data-testid": "detail-probability" },
        `${fmtPlain(model.probability)} (${model.probability >= model.threshold ? "≥" : "<"} ${t("threshold")} ${fmtPlain(model.threshold)})`)]);
    }
    if (win !== undefined && win !== null) modelRows.push([t("model_window"), windowText(win)]);
    modelBox.replaceChildren(modelRows.length ? kv(modelRows, "detail-model-table") : el("div", { class: "note" }, t("rules")));
    if (drawnFor !== String(a.id)) {
      drawnFor = String(a.id);
      drawChart(a, m, ns);
    }
  };

  const drawChart = (a: Alert, m: Market, ns: number) => {
    const q = new URLSearchParams({ from_ns: String(ns - kAroundNs), to_ns: String(ns + kAroundNs) });
    api<{ points: [number, number, number][] }>(`api/symbols/${encodeURIComponent(a.symbol)}/history?${q}`).then((r) => {
      if (!alive) return;
      if (!r.points.length) {
        chartNote.textContent = t("no_history");
        chartBox.style.display = "none";
        return;
      }
      chart?.remove();
      chart = makeChart(chartBox, m.time_zone);
      const price = chart.addLineSeries({ color: "#4c8dff", lineWidth: 2, priceFormat: { type: "price", precision: m.price_decimals, minMove: Math.pow(10, -m.price_decimals) } });
      const volume = chart.addHistogramSeries({ priceScaleId: "vol", color: "#3a4660", priceFormat: { type: "volume" } });
      chart.priceScale("vol").applyOptions({ scaleMargins: { top: 0.8, bottom: 0 } });
      let lastT = -1, lastVol = -1;
      const pts: { time: UTCTimestamp; value: number }[] = [], vols: { time: UTCTimestamp; value: number }[] = [];
      for (const [tt, p, v] of r.points) {
        const s = Math.floor(tt) as UTCTimestamp;
        if (s <= lastT || p <= 0) continue;
        pts.push({ time: s, value: p });
        vols.push({ time: s, value: lastVol >= 0 ? Math.max(0, v - lastVol) : 0 });
        lastT = s;
        lastVol = v;
      }
      price.setData(pts);
      volume.setData(vols);
      // The marker sits on the point at (or just before) the alert's second.
      const at = Math.floor(ns / 1e9);
      const near = pts.reduce((best, p) => (p.time <= at ? p.time : best), pts[0].time);
      const mk: SeriesMarker<UTCTimestamp>[] = [{ time: near, position: "aboveBar", color: a.severity === "critical" ? "#e5484d" : "#f5a524",
        shape: "arrowDown", text: typeLabel(a.type) }];
      price.setMarkers(mk);
      price.createPriceLine({ price: a.price, color: "#f5a524", lineStyle: 2, lineWidth: 1, axisLabelVisible: true, title: "" });
      chart.timeScale().fitContent();
      chartBox.dataset.points = String(pts.length);
      chartBox.dataset.alertTime = String(at);
      chartNote.textContent = `${fmtExchTime(r.points[0][0] * 1e9, m.time_zone, true)} – ${fmtExchTime(r.points[r.points.length - 1][0] * 1e9, m.time_zone)}`;
    }).catch((e) => { chartNote.textContent = `${t("no_history")} (${e.message})`; chartBox.style.display = "none"; });
  };

  const show = (a: Alert) => {
    if (!alive) return;
    rememberAlert(a);
    draw(a, market ?? marketOf(a.symbol, a));
  };
  const withMarket = (a: Alert) => {
    if (market) return show(a);
    api<{ market?: Market }>(`api/symbols/${encodeURIComponent(a.symbol)}`).then((v) => {
      if (v.market) { market = v.market; setMarket(a.symbol, v.market); }
    }).catch(() => {}).finally(() => show(a));
  };

  const cached = knownAlert(id);
  if (cached) withMarket(cached);
  // The full record: the endpoint, else the audit search at the alert's exchange time.
  api<Alert>(`api/alerts/${encodeURIComponent(id)}`).then((full) => withMarket({ ...cached, ...full, wall_ms: cached?.wall_ms }))
    .catch((e: ApiError) => {
      const base = knownAlert(id);
      if (!base) {
        msg.className = "error";
        msg.textContent = `${t("error")}: ${e.message}`;
        return;
      }
      const ns = String(base.exch_ts_ns);
      const q = new URLSearchParams({ symbol: base.symbol, since_ns: ns, until_ns: String(BigInt(ns) + 1n), limit: "50" });
      // The audit sink writes a moment after the stream: a few tries, a second apart.
      const look = (tries: number) => api<{ alerts: Alert[] }>(`api/alerts?${q}`).then((r) => {
        const rec = r.alerts.find((x) => String(x.id) === id);
        if (rec) withMarket({ ...rec, ...base, features: rec.features, book: rec.book });
        else if (tries > 1 && alive) setTimeout(() => look(tries - 1), 1000);
      }).catch(() => {});
      look(5);
    });
  return () => { alive = false; chart?.remove(); };
};

function windowText(w: unknown): string {
  if (typeof w !== "object" || w === null) return String(w);
  const o = w as Record<string, unknown>;
  const parts: string[] = [];
  for (const [k, v] of Object.entries(o)) {
    if (Array.isArray(v)) parts.push(`${k}: [${v.length}${Array.isArray(v[0]) ? ` × ${(v[0] as unknown[]).length}` : ""}]`);
    else parts.push(`${k}: ${typeof v === "number" ? fmtPlain(v) : String(v)}`);
  }
  return parts.join(" · ");
}

