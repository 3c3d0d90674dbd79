// A symbol's page: price and volume chart with its alerts marked, the model's probability over
// time (the peak of each tick) with the decision threshold and the model alerts marked, the
// order-book ladder, and the market context (previous close, change, trading phase, units).
// Times are exchange time in the exchange's zone (a replay shows the replayed day).
// History comes from /api/symbols/{s}; the "ticks", "scores" and "alert" streams are listened to
// from the start but held until the history has arrived, then merged after its last point (no gap,
// no point twice); the ladder is polled once a second.
// The picker searches every symbol the feed has seen, case-insensitively, by symbol or by name
// (names come from the instruments reference file's `name` column; feeds carry none).
import { ISeriesApi, SeriesMarker, UTCTimestamp } from "lightweight-charts";
import { Alert, api, Market, Score, stream, SymbolEntry, Tick } from "../api";
import { el, Page } from "../dom";
import { exchNs, fmtPrice, fmtQty, marketOf, setMarket } from "../format";
import { t, tf, typeLabel } from "../i18n";
import { alertHeader, alertRow } from "./alerts";
import { makeChart, ts } from "./charts";

interface SymbolView {
  symbol: string; name?: string; last: number; volume: number; bids: [number, number][]; asks: [number, number][];
  history: [number, number, number][]; probability?: [number, number][]; threshold?: number; market?: Market;
}

const kPickerShown = 200;

function ladder(v: SymbolView, m: Market): HTMLElement {
  const rows: HTMLElement[] = [];
  for (let i = v.asks.length - 1; i >= 0; i--) {
    rows.push(el("tr", { class: "ask" }, el("td", {}, `${t("ask")}${i + 1}`), el("td", { class: "num" }, fmtPrice(v.asks[i][0], m.price_decimals)), el("td", { class: "num" }, fmtQty(v.asks[i][1], m))));
  }
  for (let i = 0; i < v.bids.length; i++) {
    rows.push(el("tr", { class: "bid" }, el("td", {}, `${t("bid")}${i + 1}`), el("td", { class: "num" }, fmtPrice(v.bids[i][0], m.price_decimals)), el("td", { class: "num" }, fmtQty(v.bids[i][1], m))));
  }
  return el("table", { class: "ladder", "data-testid": "ladder" },
    el("thead", {}, el("tr", {}, el("th", {}, ""), el("th", { class: "num" }, t("price")), el("th", { class: "num" }, t("qty")))),
    el("tbody", {}, ...rows));
}

function marketLine(m: Market): HTMLElement {
  const chg = m.change_pct;
  const phaseText = m.phase && m.phase !== "unknown" ? m.phase.replace(/_/g, " ") : "–";
  return el("div", { class: "market", "data-testid": "symbol-market" },
    el("span", {}, `${t("prev_close")} `, el("b", { "data-testid": "symbol-prev-close" }, m.prev_close > 0 ? fmtPrice(m.prev_close, m.price_decimals) : "–")),
    el("span", { class: chg === null ? "" : chg > 0 ? "up" : chg < 0 ? "down" : "" }, `${t("change")} `,
      el("b", { "data-testid": "symbol-change" }, chg === null ? "–" : `${chg > 0 ? "+" : ""}${chg.toFixed(2)} %`)),
    el("span", {}, `${t("phase")} `, el("b", { "data-testid": "symbol-phase" }, phaseText)),
    el("span", {}, `${t("currency")} `, el("b", {}, m.currency || "–")),
    m.lot_size > 1 ? el("span", {}, `${t("lot")} `, el("b", {}, `${m.lot_size}`)) : null,
    m.limit_up > 0 ? el("span", {}, "↑ ", el("b", {}, fmtPrice(m.limit_up, m.price_decimals)), " ↓ ", el("b", {}, fmtPrice(m.limit_down, m.price_decimals))) : null,
    el("span", { class: "note" }, m.time_zone));
}

// Alert markers that do not pile into blobs: alerts in one bucket (a 60th of the drawn span,
// at least a second) become one marker with their count, coloured by the most severe.
function clusterMarkers(alerts: Alert[], times: number[], spanS: number): SeriesMarker<UTCTimestamp>[] {
  if (!times.length) return [];
  const bucket = Math.max(1, Math.floor(spanS / 60));
  const snap = (s: number) => {  // the last drawn point at or before s (markers sit on points)
    let lo = 0, hi = times.length - 1;
    if (s <= times[0]) return times[0];
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (times[mid] <= s) lo = mid; else hi = mid - 1;
    }
    return times[lo];
  };
  const groups = new Map<number, Alert[]>();
  for (const a of alerts) {
    const s = Math.floor(exchNs(a) / 1e9);
    const k = Math.floor(s / bucket);
    if (!groups.has(k)) groups.set(k, []);
    groups.get(k)!.push(a);
  }
  const out: SeriesMarker<UTCTimestamp>[] = [];
  const seenTimes = new Set<number>();
  for (const [, list] of [...groups.entries()].sort((x, y) => x[0] - y[0])) {
    const at = snap(Math.floor(exchNs(list[0]) / 1e9)) as UTCTimestamp;
    if (seenTimes.has(at)) continue;  // one marker per drawn point
    seenTimes.add(at);
    const critical = list.some((a) => a.severity === "critical");
    const down = list.every((a) => /drop|sell|dive|down/.test(a.type));
    out.push({ time: at, position: down ? "aboveBar" : "belowBar", color: critical ? "#e5484d" : "#f5a524", shape: "circle",
      text: list.length > 1 ? `×${list.length}` : typeLabel(list[0].type), id: String(list[0].id) });
  }
  return out.slice(-300);
}

function picker(root: HTMLElement, arg: string): void {
  const list = el("div", { class: "symbols", "data-testid": "symbol-list" });
  const more = el("div", { class: "note", "data-testid": "symbol-more" });
  const input = el("input", { placeholder: t("pick_symbol"), value: arg, "data-testid": "symbol-input", autocomplete: "off" });
  let all: SymbolEntry[] = [];
  const hit = (s: SymbolEntry, q: string) => s.s.toUpperCase().includes(q) || (s.name ?? "").toUpperCase().includes(q);
  const filter = () => {
    const q = input.value.trim().toUpperCase();
    const hits = q ? all.filter((s) => hit(s, q)) : all;
    // Symbol prefix matches first, then name prefix matches, then the rest.
    const rank = (s: SymbolEntry) => (s.s.toUpperCase().startsWith(q) ? 0 : (s.name ?? "").toUpperCase().startsWith(q) ? 1 : 2);
    hits.sort((x, y) => rank(x) - rank(y) || x.s.localeCompare(y.s));
    list.replaceChildren(...hits.slice(0, kPickerShown).map((s) => el("a", { href: `#/symbol/${encodeURIComponent(s.s)}`,
      "data-testid": "symbol-option", "data-symbol": s.s, title: s.name || s.s }, s.s,
    s.name ? el("span", { class: "note", "data-testid": "symbol-option-name" }, ` ${s.name}`) : null)));
    more.textContent = hits.length > kPickerShown ? tf("more_symbols", { n: hits.length - kPickerShown }) : "";
  };
  input.addEventListener("input", filter);
  root.append(el("form", { class: "row", onsubmit: (e: Event) => {
    e.preventDefault();
    const q = input.value.trim();
    const exact = all.find((s) => s.s.toUpperCase() === q.toUpperCase() || (s.name ?? "").toUpperCase() === q.toUpperCase());
    const only = all.filter((s) => hit(s, q.toUpperCase()));
    location.hash = `#/symbol/${encodeURIComponent(exact?.s ?? (only.length === 1 ? only[0].s : q))}`;
  } }, el("label", {}, t("symbol"), input), el("button", {}, t("open"))), list, more);
  api<{ symbols: SymbolEntry[] }>("api/symbols").then((r) => {
    all = r.symbols;
    for (const s of all) setMarket(s.s, s.market);
    filter();
  }).catch(() => {});
}

export const symbolPage: Page = (root, arg) => {
  picker(root, arg);
  if (!arg) return () => {};

  const head = el("div", { class: "bigprice", "data-testid": "symbol-price" }, "–");
  const nameBox = el("span", { class: "note", "data-testid": "symbol-name" });
  const marketBox = el("div", {});
  const chartBox = el("div", { class: "chart", "data-testid": "price-chart" });
  const probNote = el("div", { class: "note", "data-testid": "probability-none" }, t("no_probability"));
  const probBox = el("div", { class: "chart small", style: "display:none", "data-testid": "probability-chart" });
  const ladderBox = el("div", {});
  const alertBody = el("tbody", { "data-testid": "symbol-alerts" });
  root.append(el("h2", {}, arg, " ", nameBox, " ", head), marketBox,
    el("div", { class: "grid" },
      el("div", { class: "panel" }, el("h3", {}, t("price_volume")), chartBox),
      el("div", { class: "panel" }, el("h3", {}, t("ladder")), ladderBox)),
    el("div", { class: "grid", style: "margin-top:16px" },
      el("div", { class: "panel" }, el("h3", {}, t("probability")), probNote, probBox),
      el("div", { class: "panel scroll" }, el("h3", {}, t("alerts")), el("table", {}, alertHeader(null), alertBody))));

  // Stream messages are held until the history has arrived (then merged after its last point).
  let ready = false;
  const held: (() => void)[] = [];
  const whenReady = (f: () => void) => (ready ? f() : held.push(f));
  const offTicks = stream.on<Tick[]>("ticks", (ticks) => {
    for (const k of ticks) if (k.s === arg) whenReady(() => addPoint(k.t, k.p, k.v));
  });
  const offAlerts = stream.on<Alert>("alert", (a) => { if (a.symbol === arg) whenReady(() => addAlert(a)); });
  const offScores = stream.on<Score[]>("scores", (scores) => {
    for (const k of scores) if (k.s === arg) whenReady(() => addScore(k.t, k.m));
  });

  let m: Market = marketOf(arg);
  let chart: ReturnType<typeof makeChart> | null = null;
  let price: ISeriesApi<"Line"> | null = null;
  let volume: ISeriesApi<"Histogram"> | null = null;
  let lastT = 0, lastVol = -1;
  const times: number[] = [];
  const alerts: Alert[] = [];
  const alertIds = new Set<string>();
  const addPoint = (tSec: number, p: number, cumVol: number) => {
    const tt = ts(tSec);
    if (!price || !volume || tt < lastT || p <= 0) return;
    price.update({ time: tt, value: p });
    volume.update({ time: tt, value: lastVol >= 0 ? Math.max(0, cumVol - lastVol) : 0 });
    if (tt > lastT) times.push(tt);
    lastT = tt;
    lastVol = cumVol;
    head.textContent = fmtPrice(p, m.price_decimals);
    chartBox.dataset.points = String(times.length);
    chartBox.dataset.first = String(times[0]);
  };
  // The model's probability: created on the first score (rules-only symbols keep the note).
  let prob: ISeriesApi<"Line"> | null = null;
  let probChart: ReturnType<typeof makeChart> | null = null;
  let probLastT = 0, threshold = 0;
  const probTimes: number[] = [];
  const modelAlerts: Alert[] = [];
  const ensureProb = () => {
    if (prob) return prob;
    probNote.style.display = "none";
    probBox.style.display = "";
    probChart = makeChart(probBox, m.time_zone);
    prob = probChart.addLineSeries({ color: "#b48eff", lineWidth: 2, title: "p", priceFormat: { type: "price", precision: 3, minMove: 0.001 },
      autoscaleInfoProvider: () => ({ priceRange: { minValue: 0, maxValue: 1 } }) });
    drawThreshold();
    return prob;
  };
  let thresholdDrawn = false;
  const drawThreshold = () => {
    if (!prob || threshold <= 0 || thresholdDrawn) return;
    prob.createPriceLine({ price: threshold, color: "#e5484d", lineStyle: 2, lineWidth: 1, axisLabelVisible: true, title: t("threshold") });
    thresholdDrawn = true;
  };
  const addScore = (tSec: number, p: number) => {
    const tt = ts(tSec);
    if (tt < probLastT) return;
    ensureProb().update({ time: tt, value: p });
    if (tt > probLastT) probTimes.push(tt);
    probLastT = tt;
  };
  // Markers re-cluster at most every 250 ms (a flood of alerts re-clusters once per interval), but
  // an alert after a quiet interval is marked at once: the wait is only the rest of the interval.
  let markTimer = 0, markedAt = -Infinity;
  const mark = () => {
    markTimer = 0;
    markedAt = performance.now();
    if (price) price.setMarkers(clusterMarkers(alerts, times, times.length ? times[times.length - 1] - times[0] : 0));
    if (prob) prob.setMarkers(clusterMarkers(modelAlerts, probTimes, probTimes.length ? probTimes[probTimes.length - 1] - probTimes[0] : 0));
    chartBox.dataset.markers = String(alerts.length);
  };
  const remark = () => {
    if (markTimer) return;
    markTimer = window.setTimeout(mark, Math.max(0, 250 - (performance.now() - markedAt)));
  };
  const addAlert = (a: Alert) => {
    if (alertIds.has(String(a.id))) return;
    alertIds.add(String(a.id));
    alerts.push(a);
    if (a.type === "model" && a.model && !a.model.shadow) { ensureProb(); modelAlerts.push(a); }
    alertBody.prepend(alertRow(a));
    while (alertBody.children.length > 500) alertBody.lastElementChild!.remove();
    remark();
  };

  const makePriceChart = () => {
    if (chart) return;
    chart = makeChart(chartBox, m.time_zone);
    price = chart.addLineSeries({ color: "#4c8dff", lineWidth: 2, priceFormat: { type: "price", precision: m.price_decimals, minMove: Math.pow(10, -m.price_decimals) } });
    volume = chart.addHistogramSeries({ priceScaleId: "vol", color: "#3a4660", priceFormat: { type: "volume" } });
    chart.priceScale("vol").applyOptions({ scaleMargins: { top: 0.8, bottom: 0 } });
  };

  let alive = true;
  api<SymbolView>(`api/symbols/${encodeURIComponent(arg)}`).then((v) => {
    if (!alive) return undefined;
    if (v.market) { m = v.market; setMarket(arg, m); }
    nameBox.textContent = v.name ?? "";
    makePriceChart();
    for (const [tt, p, vol] of v.history) addPoint(tt, p, vol);
    threshold = v.threshold ?? 0;
    drawThreshold();
    for (const [tt, p] of v.probability ?? []) addScore(tt, p);
    ladderBox.replaceChildren(ladder(v, m));
    marketBox.replaceChildren(marketLine(m));
    return api<Alert[]>("api/alerts/recent");
  }).then((recent) => {
    for (const a of recent ?? []) if (a.symbol === arg) addAlert(a);
  }).catch((e) => ladderBox.replaceChildren(el("div", { class: "error" }, String(e.message ?? e))))
    .finally(() => {
      if (!alive) return;
      makePriceChart();  // also for a symbol without data yet: its ticks start the chart
      ready = true;  // the held stream messages, in order, after the history's last point
      for (const f of held.splice(0)) f();
    });

  const poll = setInterval(() => {
    if (!alive) return;
    api<SymbolView>(`api/symbols/${encodeURIComponent(arg)}`).then((v) => {
      if (v.market) { m = v.market; marketBox.replaceChildren(marketLine(m)); }
      ladderBox.replaceChildren(ladder(v, m));
    }).catch(() => {});
  }, 1000);
  return () => { alive = false; clearInterval(poll); clearTimeout(markTimer); offTicks(); offAlerts(); offScores(); chart?.remove(); probChart?.remove(); };
};
