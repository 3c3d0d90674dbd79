// The model-serving panels of the latency page: inference end to end (queued → result at the
// shard) P50/P99/P999 over time, per-batch queue wait and compute, the batch-size distribution of
// the last 60 s, drops by reason and failures per second. Fed by the "model" object of each
// stats point (src/http/serving_stats.h); a note stands in while no model serves.
import { IChartApi, ISeriesApi } from "lightweight-charts";
import { ModelStats, Stats } from "../api";
import { el, fmtNum } from "../dom";
import { Key, t } from "../i18n";
import { makeChart, ts } from "./charts";

const kDistSeconds = 60;
const kDropColors: Record<string, string> = { superseded: "#8792a6", deadline: "#f5a524", queue_full: "#e5484d" };

export interface ServingPanels { element: HTMLElement; add(s: Stats): void; remove(): void }

export function servingPanels(): ServingPanels {
  const note = el("p", { class: "note", "data-testid": "serving-none" }, t("no_batcher"));
  const body = el("div", { class: "grid", style: "display:none", "data-testid": "serving-panels" });
  const element = el("div", { style: "margin-top:16px" }, el("h2", {}, t("serving")), note, body);

  const e2eBox = el("div", { class: "chart small", "data-testid": "serving-e2e-chart" });
  const queueBox = el("div", { class: "chart small", "data-testid": "serving-queue-chart" });
  const dropsBox = el("div", { class: "chart small", "data-testid": "serving-drops-chart" });
  const dist = el("div", { class: "bars", "data-testid": "batch-dist" });
  const rate = el("div", { class: "note", "data-testid": "serving-rate" });
  const dropsBody = el("tbody", { "data-testid": "drops-table" });
  body.append(
    el("div", { class: "panel" }, el("h3", {}, t("inference_e2e")), e2eBox),
    el("div", { class: "panel" }, el("h3", {}, t("queue_compute")), queueBox),
    el("div", { class: "panel" }, el("h3", {}, t("batch_dist")), rate, dist),
    el("div", { class: "panel" }, el("h3", {}, t("drops_failures")), dropsBox,
      el("table", {}, el("thead", {}, el("tr", {}, el("th", {}, t("reason")), el("th", { class: "num" }, t("last_s")),
        el("th", { class: "num" }, t("since_start")))), dropsBody)));

  const charts: IChartApi[] = [];
  let e2e: ISeriesApi<"Line">[] = [], queue: ISeriesApi<"Line">[] = [];
  let drops: IChartApi | null = null;
  const dropSeries = new Map<string, ISeriesApi<"Line">>();
  const recent: ModelStats["batch_sizes"][] = [];
  let lastT = 0;

  const start = () => {
    note.style.display = "none";
    body.style.display = "";
    const c1 = makeChart(e2eBox), c2 = makeChart(queueBox);
    drops = makeChart(dropsBox);
    charts.push(c1, c2, drops);
    e2e = [c1.addLineSeries({ color: "#30a46c", title: "P50" }), c1.addLineSeries({ color: "#f5a524", title: "P99" }),
      c1.addLineSeries({ color: "#e5484d", title: "P999" })];
    queue = [c2.addLineSeries({ color: "#4c8dff", title: `${t("queue_wait")} P50` }),
      c2.addLineSeries({ color: "#8fb5ff", title: `${t("queue_wait")} P99`, lineStyle: 2 }),
      c2.addLineSeries({ color: "#30a46c", title: `${t("compute")} P50` }),
      c2.addLineSeries({ color: "#7fd4a4", title: `${t("compute")} P99`, lineStyle: 2 })];
  };
  const dropLine = (key: string, color: string, title: string) => {
    let s = dropSeries.get(key);
    if (!s) {
      s = drops!.addLineSeries({ color, title });
      dropSeries.set(key, s);
    }
    return s;
  };

  const renderDist = () => {
    const sum = new Map<number, number>();
    for (const w of recent) for (const [le, n] of w) sum.set(le, (sum.get(le) ?? 0) + n);
    const all = [...sum.entries()].sort((a, b) => a[0] - b[0]);
    // Up to the largest size bucket that had batches (at least 4 rows), not 13 rows of zeros.
    const lastUsed = all.reduce((last, [, n], i) => (n > 0 ? i : last), 0);
    const rows = all.slice(0, Math.max(4, lastUsed + 1));
    const max = Math.max(1, ...rows.map(([, n]) => n));
    dist.replaceChildren(...rows.map(([le, n], i) => {
      const lo = i === 0 ? 1 : rows[i - 1][0] + 1;
      return el("div", { class: "bar", "data-testid": "batch-bar", "data-size": le, "data-count": n },
        el("span", { class: "bar-label" }, lo === le ? String(le) : `${lo}–${le}`),
        el("span", { class: "bar-fill", style: `width:${(100 * n) / max}%` }),
        el("span", { class: "bar-value" }, fmtNum(n, 0)));
    }));
  };

  const add = (s: Stats) => {
    const m = s.model;
    if (!m) return;
    const tt = ts(s.t);
    if (tt <= lastT) return;
    lastT = tt;
    if (!charts.length) start();
    if (m.end_to_end_us.count > 0) {
      e2e[0].update({ time: tt, value: m.end_to_end_us.p50 });
      e2e[1].update({ time: tt, value: m.end_to_end_us.p99 });
      e2e[2].update({ time: tt, value: m.end_to_end_us.p999 });
    }
    if (m.queue_wait_us.count > 0) {
      queue[0].update({ time: tt, value: m.queue_wait_us.p50 });
      queue[1].update({ time: tt, value: m.queue_wait_us.p99 });
      queue[2].update({ time: tt, value: m.compute_us.p50 });
      queue[3].update({ time: tt, value: m.compute_us.p99 });
    }
    for (const [reason, n] of Object.entries(m.drops)) {
      dropLine(reason, kDropColors[reason] ?? "#b48ead", t(reason as Key) ?? reason).update({ time: tt, value: n });
    }
    dropLine("failed", "#ff6b6b", t("failed")).update({ time: tt, value: m.failed_batches });
    recent.push(m.batch_sizes);
    while (recent.length > kDistSeconds) recent.shift();
    renderDist();
    rate.textContent = `${fmtNum(m.inferences_per_s, 0)} ${t("inferences_per_s")} · ${fmtNum(m.batches_per_s, 0)} ${t("batches")}/s · ` +
      `${t("mean_batch")} ${fmtNum(m.mean_batch, 1)}`;
    const row = (label: string, last: number, total: number, key: string) =>
      el("tr", { "data-reason": key }, el("td", {}, label), el("td", { class: "num" }, fmtNum(last, 0)), el("td", { class: "num" }, fmtNum(total, 0)));
    dropsBody.replaceChildren(
      ...Object.keys(m.drops_total).map((r) => row(t(r as Key) ?? r, m.drops[r] ?? 0, m.drops_total[r], r)),
      row(t("failed"), m.failed_batches, m.failed_total, "failed"),
      row(t("switches"), 0, m.backend_switches_total, "switches"));
  };
  return { element, add, remove: () => charts.forEach((c) => c.remove()) };
}
