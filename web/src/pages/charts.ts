// lightweight-charts set-up shared by the pages (dark theme, seconds on the time axis).
// Chart times are exchange time (Unix seconds); `zone` (IANA) labels the axis and the crosshair in
// the exchange's own zone, so a replayed Shanghai day reads 09:30, wherever the browser is.
import { createChart, IChartApi, UTCTimestamp } from "lightweight-charts";

export function makeChart(container: HTMLElement, zone?: string): IChartApi {
  let hms: Intl.DateTimeFormat, hm: Intl.DateTimeFormat;
  try {
    hms = new Intl.DateTimeFormat("en-GB", { timeZone: zone, hour12: false, hour: "2-digit", minute: "2-digit", second: "2-digit" });
    hm = new Intl.DateTimeFormat("en-GB", { timeZone: zone, hour12: false, hour: "2-digit", minute: "2-digit" });
  } catch {
    hms = new Intl.DateTimeFormat("en-GB", { hour12: false, hour: "2-digit", minute: "2-digit", second: "2-digit" });
    hm = new Intl.DateTimeFormat("en-GB", { hour12: false, hour: "2-digit", minute: "2-digit" });
  }
  const chart = createChart(container, {
    autoSize: true,
    layout: { background: { color: "#171c26" }, textColor: "#d8dee9" },
    grid: { vertLines: { color: "#222a38" }, horzLines: { color: "#222a38" } },
    timeScale: {
      timeVisible: true, secondsVisible: true,
      tickMarkFormatter: (t: number, type: number) => (type >= 4 ? hms : hm).format(new Date(t * 1000)),
    },
    localization: { timeFormatter: (t: number) => hms.format(new Date(t * 1000)) },
  });
  return chart;
}

// Chart time from Unix seconds, floored to a whole second (one point per second per series).
export function ts(seconds: number): UTCTimestamp {
  return Math.floor(seconds) as UTCTimestamp;
}
