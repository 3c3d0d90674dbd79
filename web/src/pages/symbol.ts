// A symbol's page: price and volume chart with its alerts marked, the model's probability over
// time (the peak of each second) with the decision threshold and the model alerts marked, and the
// order-book ladder. History comes from /api/symbols/{s}, then the "ticks", "scores" and "alert"
// streams extend it; the ladder is polled once a second.
import { ISeriesApi, SeriesMarker, UTCTimestamp } from "lightweight-charts";
import { Alert, api, Score, stream, Tick } from "../api";
import { el, fmtNum, Page } from "../dom";
import { t, typeLabel } from "../i18n";
import { alertRow } from "./alerts";
import { makeChart, ts } from "./charts";

interface SymbolView {
  symbol: string; last: number; volume: number; bids: [number, number][]; asks: [number, number][];
  history: [number, number, number][]; probability?: [number, number][]; threshold?: number;
}

function ladder(v: SymbolView): HTMLElement {
  const rows: HTMLElement[] = [];
  for (let i = v.asks.length - 1; i >= 0; i--) {
    rows.push(el("tr", { class: "ask" }, el("td", {}, `${t("ask")}${i + 1}`), el("td", { class: "num" }, fmtNum(v.asks[i][0], 4)), el("td", { class: "num" }, fmtNum(v.asks[i][1], 0))));
  }
  for (let i = 0; i < v.bids.length; i++) {
    rows.push(el("tr", { class: "bid" }, el("td", {}, `${t("bid")}${i + 1}`), el("td", { class: "num" }, fmtNum(v.bids[i][0], 4)), el("td", { class: "num" }, fmtNum(v.bids[i][1], 0))));
  }
  return el("table", { class: "ladder", "data-testid": "ladder" },
    el("thead", {}, el("tr", {}, el("th", {}, ""), el("th", { class: "num" }, t("price")), el("th", { class: "num" }, t("qty")))),
    el("tbody", {}, ...rows));
}

export const symbolPage: Page = (root, arg) => {
  const picker = el("div", { class: "symbols", "data-testid": "symbol-list" });
  const input = el("input", { placeholder: t("pick_symbol"), value: arg, "data-testid": "symbol-input" });
  root.append(el("form", { class: "row", onsubmit: (e: Event) => { e.preventDefault(); location.hash = `#/symbol/${encodeURIComponent(input.value.trim())}`; } },
    el("label", {}, t("symbol"), input), el("button", {}, t("open"))), picker);
  api<{ symbols: { s: string; p: number }[] }>("api/symbols").then((r) => {
    picker.replaceChildren(...r.symbols.slice(0, 300).map((s) => el("a", { href: `#/symbol/${encodeURIComponent(s.s)}` }, s.s)));
  }).catch(() => {});
  if (!arg) return () => {};

  const head = el("div", { class: "bigprice", "data-testid": "symbol-price" }, "–");
  const chartBox = el("div", { class: "chart", "data-testid": "price-chart" });
  const probNote = el("div", { class: "note", "data-testid": "probability-none" }, t("no_probability"));
  const probBox = el("div", { class: "chart small", style: "display:none", "data-testid": "probability-chart" });
  const ladderBox = el("div", {});
  const alertBody = el("tbody", {});
  root.append(el("h2", {}, arg, " ", head),
    el("div", { class: "grid" },
      el("div", { class: "panel" }, el("h3", {}, t("price_volume")), chartBox),
      el("div", { class: "panel" }, el("h3", {}, t("ladder")), ladderBox)),
    el("div", { class: "grid", style: "margin-top:16px" },
      el("div", { class: "panel" }, el("h3", {}, t("probability")), probNote, probBox),
      el("div", { class: "panel scroll" }, el("h3", {}, t("alerts")), el("table", {}, alertBody))));

  const chart = makeChart(chartBox);
  const price: ISeriesApi<"Line"> = chart.addLineSeries({ color: "#4c8dff", lineWidth: 2 });
  const volume: ISeriesApi<"Histogram"> = chart.addHistogramSeries({ priceScaleId: "vol", color: "#3a4660", priceFormat: { type: "volume" } });
  chart.priceScale("vol").applyOptions({ scaleMargins: { top: 0.8, bottom: 0 } });
  let lastT = 0, lastVol = -1;
  const markers: SeriesMarker<UTCTimestamp>[] = [];
  const addPoint = (tSec: number, p: number, cumVol: number) => {
    const tt = ts(tSec);
    if (tt < lastT || p <= 0) return;
    price.update({ time: tt, value: p });
    volume.update({ time: tt, value: lastVol >= 0 ? Math.max(0, cumVol - lastVol) : 0 });
    lastT = tt;
    lastVol = cumVol;
    head.textContent = fmtNum(p, 4);
  };
  // The model's probability: created on the first score (rules-only symbols keep the note).
  let prob: ISeriesApi<"Line"> | null = null;
  let probChart: ReturnType<typeof makeChart> | null = null;
  let probLastT = 0, threshold = 0;
  const probMarkers: SeriesMarker<UTCTimestamp>[] = [];
  const ensureProb = () => {
    if (prob) return prob;
    probNote.style.display = "none";
    probBox.style.display = "";
    probChart = makeChart(probBox);
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
    probLastT = tt;
  };
  const markModelAlert = (a: Alert) => {
    if (a.type !== "model" || !a.model || a.model.shadow) return;
    const when = ts((a.wall_ms ?? Date.now()) / 1000);
    ensureProb();
    probMarkers.push({ time: when > probLastT && probLastT > 0 ? (probLastT as UTCTimestamp) : when, position: "aboveBar",
      color: a.severity === "critical" ? "#e5484d" : "#f5a524", shape: "arrowDown", text: fmtNum(a.model.probability, 3) });
    probMarkers.sort((x, y) => x.time - y.time);
    prob!.setMarkers(probMarkers.slice(-200));
  };

  const addAlert = (a: Alert) => {
    markModelAlert(a);
    alertBody.prepend(alertRow(a));
    const when = ts((a.wall_ms ?? Date.now()) / 1000);
    markers.push({ time: when > lastT && lastT > 0 ? (lastT as UTCTimestamp) : when, position: a.type.includes("drop") || a.type.includes("sell") || a.type.includes("dive") ? "aboveBar" : "belowBar",
      color: a.severity === "critical" ? "#e5484d" : "#f5a524", shape: "circle", text: typeLabel(a.type) });
    markers.sort((x, y) => x.time - y.time);
    price.setMarkers(markers.slice(-200));
  };

  let alive = true;
  api<SymbolView>(`api/symbols/${encodeURIComponent(arg)}`).then((v) => {
    for (const [tt, p, vol] of v.history) addPoint(tt, p, vol);
    threshold = v.threshold ?? 0;
    drawThreshold();
    for (const [tt, p] of v.probability ?? []) addScore(tt, p);
    ladderBox.replaceChildren(ladder(v));
    return api<Alert[]>("api/alerts/recent");
  }).then((recent) => {
    for (const a of recent) if (a.symbol === arg) addAlert(a);
  }).catch((e) => ladderBox.replaceChildren(el("div", { class: "error" }, String(e.message ?? e))));

  const offTicks = stream.on<Tick[]>("ticks", (ticks) => {
    for (const k of ticks) if (k.s === arg) addPoint(k.t, k.p, k.v);
  });
  const offAlerts = stream.on<Alert>("alert", (a) => { if (a.symbol === arg) addAlert(a); });
  const offScores = stream.on<Score[]>("scores", (scores) => {
    for (const k of scores) if (k.s === arg) addScore(k.t, k.m);
  });
  const poll = setInterval(() => {
    if (!alive) return;
    api<SymbolView>(`api/symbols/${encodeURIComponent(arg)}`).then((v) => ladderBox.replaceChildren(ladder(v))).catch(() => {});
  }, 1000);
  return () => { alive = false; clearInterval(poll); offTicks(); offAlerts(); offScores(); chart.remove(); probChart?.remove(); };
};
