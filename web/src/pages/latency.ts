// Latency and throughput: receive → alert P50/P99/P999 over time, the per-stage breakdown of the
// last second, events/s and alerts/s, and the model-serving panels (serving.ts; a note while
// only rules run).
import { ISeriesApi } from "lightweight-charts";
import { api, Stats, stream } from "../api";
import { el, fmtNum, Page } from "../dom";
import { Key, t } from "../i18n";
import { makeChart, ts } from "./charts";
import { servingPanels } from "./serving";

const kStages = ["book", "features", "detect", "emit", "total"] as const;

export const latencyPage: Page = (root) => {
  const latBox = el("div", { class: "chart", "data-testid": "latency-chart" });
  const thrBox = el("div", { class: "chart small", "data-testid": "throughput-chart" });
  const stageBody = el("tbody", { "data-testid": "stage-table" });
  const summary = el("div", { class: "note", "data-testid": "throughput-now" });
  root.append(el("div", { class: "grid" },
    el("div", { class: "panel" }, el("h3", {}, t("receive_to_alert")), latBox),
    el("div", { class: "panel" }, el("h3", {}, t("per_stage")),
      el("table", {}, el("thead", {}, el("tr", {}, el("th", {}, t("stage")), el("th", { class: "num" }, "P50"),
        el("th", { class: "num" }, "P99"), el("th", { class: "num" }, "P999"), el("th", { class: "num" }, "n"))), stageBody)),
    el("div", { class: "panel" }, el("h3", {}, t("throughput")), summary, thrBox)));
  const serving = servingPanels();
  root.append(serving.element);

  const lat = makeChart(latBox);
  const p50 = lat.addLineSeries({ color: "#30a46c", title: "P50" });
  const p99 = lat.addLineSeries({ color: "#f5a524", title: "P99" });
  const p999 = lat.addLineSeries({ color: "#e5484d", title: "P999" });
  const thr = makeChart(thrBox);
  const eps: ISeriesApi<"Line"> = thr.addLineSeries({ color: "#4c8dff", title: t("events_per_s") });
  const aps: ISeriesApi<"Line"> = thr.addLineSeries({ color: "#f5a524", title: t("alerts_per_s"), priceScaleId: "left" });
  thr.applyOptions({ leftPriceScale: { visible: true } });

  let lastT = 0;
  const add = (s: Stats) => {
    serving.add(s);
    const tt = ts(s.t);
    if (tt <= lastT) return;
    lastT = tt;
    const total = s.latency_us.total;
    if (total && total.count > 0) {
      p50.update({ time: tt, value: total.p50 });
      p99.update({ time: tt, value: total.p99 });
      p999.update({ time: tt, value: total.p999 });
    }
    eps.update({ time: tt, value: s.events_per_s });
    aps.update({ time: tt, value: s.alerts_per_s });
    summary.textContent = `${fmtNum(s.events_per_s, 0)} ${t("events_per_s")} · ${fmtNum(s.alerts_per_s, 1)} ${t("alerts_per_s")} · ` +
      `${fmtNum(s.events_total, 0)} / ${fmtNum(s.alerts_total, 0)}`;
    if (total && total.count > 0) {
      stageBody.replaceChildren(...kStages.map((k) => {
        const p = s.latency_us[k];
        return el("tr", {}, el("td", {}, t(k as Key)), el("td", { class: "num" }, fmtNum(p.p50, 2)),
          el("td", { class: "num" }, fmtNum(p.p99, 2)), el("td", { class: "num" }, fmtNum(p.p999, 2)), el("td", { class: "num" }, String(p.count)));
      }));
    }
  };
  api<{ points: Stats[] }>("api/stats").then((r) => r.points.forEach(add)).catch(() => {});
  const off = stream.on<Stats>("stats", add);
  return () => { off(); lat.remove(); thr.remove(); serving.remove(); };
};
