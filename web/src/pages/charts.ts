// lightweight-charts set-up shared by the pages (dark theme, seconds on the time axis).
import { createChart, IChartApi, UTCTimestamp } from "lightweight-charts";

export function makeChart(container: HTMLElement): IChartApi {
  const chart = createChart(container, {
    autoSize: true,
    layout: { background: { color: "#171c26" }, textColor: "#d8dee9" },
    grid: { vertLines: { color: "#222a38" }, horzLines: { color: "#222a38" } },
    timeScale: { timeVisible: true, secondsVisible: true },
    localization: { timeFormatter: (t: number) => new Date(t * 1000).toLocaleTimeString(undefined, { hour12: false }) },
  });
  return chart;
}

// Chart time from Unix seconds, floored to a whole second (one point per second per series).
export function ts(seconds: number): UTCTimestamp {
  return Math.floor(seconds) as UTCTimestamp;
}
