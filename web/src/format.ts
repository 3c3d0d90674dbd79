// Numbers and times as a trader reads them: prices in the instrument's precision, notionals with
// their currency, quantities in board lots where the market trades in lots, latencies in ns/µs/ms,
// exchange time in the exchange's zone, and alert conditions that read true.
import { Alert, Market } from "./api";
import { getLang } from "./i18n";

// The market context of a symbol: from /api/symbols (market), else guessed from the name
// (A-share suffixes or six digits: CNY, lots of 100, Shanghai time; anything else: USD, New York).
const known = new Map<string, Market>();
export function setMarket(symbol: string, m: Market | undefined): void {
  if (m) known.set(symbol, m);
}
export function marketOf(symbol: string, a?: Alert): Market {
  const m = known.get(symbol);
  if (m) return m;
  const cn = /\.(SH|SS|SZ|BJ)$/i.test(symbol) || /^\d{6}$/.test(symbol);
  let decimals = 2;
  const text = a?.price_text;
  if (text) decimals = text.includes(".") ? text.length - text.indexOf(".") - 1 : 0;
  return {
    exch_ts_ns: "0", phase: "unknown", prev_close: 0, change_pct: null, currency: cn ? "CNY" : symbol.includes(":") ? "" : "USD",
    lot_size: cn ? 100 : 1, price_decimals: decimals, time_zone: cn ? "Asia/Shanghai" : symbol.includes(":") ? "UTC" : "America/New_York",
    utc_offset_s: 0, limit_up: 0, limit_down: 0,
  };
}

const locale = () => (getLang() === "zh" ? "zh-CN" : "en-US");
// PERF NOTE: Number.toLocaleString with options builds a new Intl.NumberFormat on every call; a
// flood formats thousands of numbers a second, so the formatters are made once per shape.
const numberFormats = new Map<string, Intl.NumberFormat>();
function num(x: number, min: number, max: number): string {
  const key = `${locale()}|${min}|${max}`;
  let f = numberFormats.get(key);
  if (!f) {
    f = new Intl.NumberFormat(locale(), { minimumFractionDigits: min, maximumFractionDigits: max });
    numberFormats.set(key, f);
  }
  return f.format(x);
}

export function fmtPrice(x: number, decimals: number): string {
  if (!Number.isFinite(x) || x === 0) return "–";
  return num(x, decimals, decimals);
}

export function fmtNotional(x: number, m: Market): string {
  if (!Number.isFinite(x)) return "–";
  const abs = Math.abs(x);
  const text = abs >= 1e8 ? `${num(x / 1e6, 0, 1)}M` : num(x, 0, m.price_decimals);
  return m.currency ? `${m.currency} ${text}` : text;
}

// Shares (or coins) as lots where the market trades in lots: "12 lots" (1,200 shares).
export function fmtQty(q: number, m: Market): string {
  if (!Number.isFinite(q)) return "–";
  if (m.lot_size > 1) {
    const lots = q / m.lot_size;
    const n = num(lots, 0, Number.isInteger(lots) ? 0 : 2);
    return getLang() === "zh" ? `${n} 手` : `${n} ${lots === 1 ? "lot" : "lots"}`;
  }
  return num(q, 0, 8);
}

// Nanoseconds in the unit a person reads: 850 ns, 12.3 µs, 4.1 ms, 1.20 s.
export function fmtLatency(ns: number | undefined): string {
  if (ns === undefined || !Number.isFinite(ns) || ns <= 0) return "–";
  if (ns < 1e3) return `${Math.round(ns)} ns`;
  if (ns < 1e6) return `${(ns / 1e3).toFixed(ns < 1e4 ? 2 : 1)} µs`;
  if (ns < 1e9) return `${(ns / 1e6).toFixed(ns < 1e7 ? 2 : 1)} ms`;
  return `${(ns / 1e9).toFixed(2)} s`;
}

// Exchange time (ns since the epoch, a string or a number) in the exchange's zone.
export function exchNs(a: { exch_ts_ns: string | number }): number {
  return Number(a.exch_ts_ns);
}
const fmts = new Map<string, Intl.DateTimeFormat>();
function zoned(zone: string, date: boolean): Intl.DateTimeFormat {
  const key = `${zone}|${date}`;
  let f = fmts.get(key);
  if (!f) {
    try {
      f = new Intl.DateTimeFormat("en-CA", { timeZone: zone, hour12: false, hour: "2-digit", minute: "2-digit", second: "2-digit",
        ...(date ? { year: "numeric", month: "2-digit", day: "2-digit", timeZoneName: "short" } : {}) });
    } catch {
      f = new Intl.DateTimeFormat("en-CA", { timeZone: "UTC", hour12: false, hour: "2-digit", minute: "2-digit", second: "2-digit" });
    }
    fmts.set(key, f);
  }
  return f;
}
export function fmtExchTime(ns: number, zone: string, withDate = false): string {
  if (!Number.isFinite(ns) || ns <= 0) return "–";
  const ms = Math.floor(ns / 1e6);
  const text = zoned(zone, withDate).format(new Date(ms)).replace(",", "");
  const frac = "." + String(ms % 1000).padStart(3, "0");
  // "2023-02-01 09:31:05 GMT+8" → "2023-02-01 09:31:05.123 GMT+8"
  return withDate ? text.replace(/(\d\d:\d\d:\d\d)/, `$1${frac}`) : text + frac;
}

// A wall-clock time in `zone` ("2012-06-21T09:30" or "…:05", as a datetime-local input gives it)
// as ms since the epoch; NaN when it does not parse. The zone's offset is read at the answer, so
// a time beside a daylight-saving change lands on the zone's own reading of it.
export function zonedWallToUtcMs(wall: string, zone: string): number {
  const m = /^(\d{4})-(\d\d)-(\d\d)[T ](\d\d):(\d\d)(?::(\d\d)(?:\.(\d{1,3}))?)?$/.exec(wall.trim());
  if (!m) return NaN;
  const asUtc = Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +(m[6] ?? 0), +((m[7] ?? "0").padEnd(3, "0")));
  let t = asUtc - zoneOffsetMs(zone, asUtc);
  t = asUtc - zoneOffsetMs(zone, t);
  return t;
}
const offsetFmts = new Map<string, Intl.DateTimeFormat>();
// The zone's UTC offset (ms, east positive) at the instant `utcMs`.
export function zoneOffsetMs(zone: string, utcMs: number): number {
  let f = offsetFmts.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", { timeZone: zone, hourCycle: "h23", year: "numeric", month: "2-digit", day: "2-digit",
      hour: "2-digit", minute: "2-digit", second: "2-digit" });
    offsetFmts.set(zone, f);
  }
  const p: Record<string, number> = {};
  for (const part of f.formatToParts(new Date(utcMs))) if (part.type !== "literal") p[part.type] = Number(part.value);
  const wall = Date.UTC(p.year, p.month - 1, p.day, p.hour % 24, p.minute, p.second);
  return wall - (utcMs - (((utcMs % 1000) + 1000) % 1000));
}

// Value names as words (the detectors' names stay in the tooltip).
const labels: Record<string, [string, string]> = {
  limit_up_ticks: ["limit up", "涨停价"], limit_down_ticks: ["limit down", "跌停价"],
  best_bid_ticks: ["best bid", "买一价"], best_ask_ticks: ["best ask", "卖一价"], trade_price_ticks: ["trade price", "成交价"],
  recent_high_ticks: ["recent high", "近期高点"], spread_ticks: ["spread", "价差"], typical_spread_ticks: ["typical spread", "常态价差"],
  bid_qty_at_limit: ["bid queue at limit", "涨停封单"], ask_qty_at_limit: ["ask queue at limit", "跌停封单"],
  notional: ["notional", "成交额"], typical_minute_notional: ["typical minute notional", "常态分钟成交额"], qty: ["quantity", "数量"],
  peak_qty: ["peak queue", "峰值封单"], depth_5: ["depth (5 levels)", "五档深度"], probability: ["probability", "概率"],
};
export function valueLabel(name: string): string {
  const l = labels[name];
  if (l) return l[getLang() === "zh" ? 1 : 0];
  return name.replace(/_ticks$/, "").replace(/_/g, " ");
}

function holds(v: number, cmp: string, th: number): boolean {
  switch (cmp) {
    case ">=": return v >= th;
    case "<=": return v <= th;
    case ">": return v > th;
    case "<": return v < th;
    default: return true;
  }
}

export interface ValueView { name: string; label: string; value: string; condition: string; holds: boolean; cmp: string }

// One alert value as a trader reads it. `tick`: currency per tick (price_ticks names become
// prices). A comparison is shown only where it holds: a limit-opened alert fires on one of several
// conditions, and `best_ask_ticks=0 (>447)` (no ask at all) does not read true.
export function valueView(v: Alert["values"][number], m: Market, tick: number): ValueView {
  const isCmp = !!v.cmp && v.cmp !== "info";
  let fmt = (x: number) => fmtPlain(x);
  if (v.name.endsWith("_ticks") && v.name !== "spread_ticks" && v.name !== "typical_spread_ticks") {
    fmt = (x: number) => (x === 0 ? (getLang() === "zh" ? "无" : "none") : fmtPrice(x * tick, m.price_decimals));
  } else if (v.name.endsWith("_ticks")) {
    fmt = (x: number) => `${fmtPlain(x)} ${getLang() === "zh" ? "档" : x === 1 ? "tick" : "ticks"}`;
  } else if (v.name.includes("notional")) {
    fmt = (x: number) => fmtNotional(x, m);
  } else if (v.name === "qty" || v.name.includes("qty") || v.name === "depth_5") {
    fmt = (x: number) => fmtQty(x, m);
  } else if (v.name.endsWith("_bps")) {
    fmt = (x: number) => `${fmtPlain(x)} bp`;
  } else if (v.name.endsWith("_pct")) {
    fmt = (x: number) => `${fmtPlain(x)} %`;
  }
  const ok = isCmp && holds(v.value, v.cmp, v.threshold);
  return { name: v.name, label: valueLabel(v.name), value: fmt(v.value), condition: ok ? `${v.cmp} ${fmt(v.threshold)}` : "", holds: ok, cmp: v.cmp };
}

export function fmtPlain(x: number): string {
  if (!Number.isFinite(x)) return "–";
  const abs = Math.abs(x);
  return num(x, 0, abs >= 100 ? 0 : abs >= 1 ? 2 : 4);
}

// Currency per tick of an alert's symbol: price / price_ticks, else 10^-decimals.
export function tickOf(a: Alert, m: Market): number {
  if (a.price_ticks && a.price) return a.price / a.price_ticks;
  return Math.pow(10, -m.price_decimals);
}

// "limit up 1,851.00; best bid 1,850.99 < 1,851.00": the values column of a feed row.
export function valuesText(a: Alert): string {
  const m = marketOf(a.symbol, a);
  const tick = tickOf(a, m);
  return a.values.map((v) => {
    const w = valueView(v, m, tick);
    return `${w.label} ${w.value}${w.condition ? ` (${w.condition})` : ""}`;
  }).join("; ");
}
