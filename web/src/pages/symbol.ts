// A symbol's page: price and volume chart with its alerts marked, the model's probability when a
// model scores it, and the order-book ladder. History comes from /api/symbols/{s}, then the
// "ticks" and "alert" streams extend it; the ladder is polled once a second.
import { ISeriesApi, SeriesMarker, UTCTimestamp } from "lightweight-charts";
import { Alert, api, stream, Tick } from "../api";
import { el, fmtNum, Page } from "../dom";
import { t, typeLabel } from "../i18n";
import { alertRow } from "./alerts";
import { makeChart, ts } from "./charts";

interface SymbolView {
  symbol: string; last: number; volume: number; bids: [number, number][]; asks: [number, number][];
  history: [number, number, number][];
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
  const probBox = el("div", { class: "note" }, t("no_probability"));
  const ladderBox = el("div", {});
  const alertBody = el("tbody", {});
  root.append(el("h2", {}, arg, " ", head),
    el("div", { class: "grid" },
      el("div", { class: "panel" }, el("h3", {}, t("price_volume")), chartBox),
      el("div", { class: "panel" }, el("h3", {}, t("ladder")), ladderBox)),
    el("div", { class: "grid", style: "margin-top:16px" },
      el("div", { class: "panel" }, el("h3", {}, t("probability")), probBox),
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
  const addAlert = (a: Alert) => {
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
    ladderBox.replaceChildren(ladder(v));
    return api<Alert[]>("api/alerts/recent");
  }).then((recent) => {
    for (const a of recent) if (a.symbol === arg) addAlert(a);
  }).catch((e) => ladderBox.replaceChildren(el("div", { class: "error" }, String(e.message ?? e))));

  const offTicks = stream.on<Tick[]>("ticks", (ticks) => {
    for (const k of ticks) if (k.s === arg) addPoint(k.t, k.p, k.v);
  });
  const offAlerts = stream.on<Alert>("alert", (a) => { if (a.symbol === arg) addAlert(a); });
  const poll = setInterval(() => {
    if (!alive) return;
    api<SymbolView>(`api/symbols/${encodeURIComponent(arg)}`).then((v) => ladderBox.replaceChildren(ladder(v))).catch(() => {});
  }, 1000);
  return () => { alive = false; clearInterval(poll); offTicks(); offAlerts(); chart.remove(); };
};
