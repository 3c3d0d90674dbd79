// English and Chinese labels. t(key) returns the current language's text; the toggle in the
// header switches language and re-renders the page (the choice is kept in localStorage).
export type Lang = "en" | "zh";

const en = {
  alerts: "Alerts", symbol: "Symbol", latency: "Latency", models: "Models", silences: "Silences", audit: "Audit log",
  connected: "live", disconnected: "reconnecting…",
  type: "Type", severity: "Severity", model: "Model", any: "any", time: "Time", price: "Price", values: "Values",
  latency_us: "Latency µs", silenced: "silenced", rules: "rules", clear: "Clear", shown: "shown",
  last: "Last", volume: "Volume", bid: "Bid", ask: "Ask", qty: "Qty", ladder: "Order book", open: "Open",
  price_volume: "Price and volume (alerts marked)", probability: "Model probability",
  no_probability: "No model scores this symbol yet: rules only.",
  receive_to_alert: "Receive → alert latency (µs)", per_stage: "Per-stage breakdown (µs, last second)",
  stage: "Stage", throughput: "Throughput", events_per_s: "events/s", alerts_per_s: "alerts/s",
  batching: "Batch size and queue wait",
  no_batcher: "No model batcher in this process (rules only): batch-size and queue-wait metrics appear when a model serves.",
  serving: "Model serving", inference_e2e: "Inference end to end: queued → result (µs)",
  queue_compute: "Queue wait and compute per batch (µs)", batch_dist: "Batch-size distribution (last 60 s)",
  drops_failures: "Drops by reason and failures (per second)", batches: "batches", inferences_per_s: "inferences/s",
  mean_batch: "mean batch", queue_wait: "queue wait", compute: "compute", failed: "failed batches",
  fallback: "CPU retries", reason: "Reason", last_s: "last s", since_start: "since start", threshold: "threshold",
  superseded: "superseded", deadline: "deadline", queue_full: "queue full", switches: "backend switches",
  name: "Name", version: "Version", stage_col: "Stage", metrics: "Metrics", actions: "Actions",
  promote: "Promote", rollback: "Rollback", shadow: "Shadow", no_models: "No model registry in this process.",
  model_from_file: "Served from a file (--model): promote, shadow and rollback need a model registry.",
  confirm_action: "Really {action} {name} {version}?",
  new_silence: "New silence", duration_min: "Duration (min)", comment: "Comment", create: "Create",
  active: "active", expired: "expired", expire: "Expire", muted: "Muted", ends: "Ends", matchers: "Matchers",
  search: "Search", since: "Since", until: "Until", limit: "Limit", results: "results", zone: "Exchange time zone",
  no_audit: "No audit store in this process.", error: "Error", symbols: "Symbols", pick_symbol: "Pick a symbol",
  total: "total", book: "book", features: "features", detect: "detect", emit: "emit",
  info: "info", warning: "warning", critical: "critical",
  pause: "Pause", resume: "Resume", paused_new: "paused: {n} new", hover_paused: "paused while the pointer is on the feed",
  details: "Details", alert_detail: "Alert", book_not_recorded: "Book not recorded for this alert.",
  book_at_alert: "Order book at the alert", no_history: "No price history kept around this time (the live feed keeps the last 10 minutes per tick, then one point a minute).",
  chart_around: "Price and volume around the alert (exchange time)", conditions: "Values and thresholds",
  feature_row: "Feature row", model_window: "Model input window", no_features: "Feature row not recorded (no audit store).",
  exchange_time: "Exchange time", prev_close: "Prev close", change: "Change", phase: "Phase", currency: "Currency", lot: "Lot",
  page: "Page", prev_page: "‹ Newer", next_page: "Older ›", export_csv: "Export CSV", older_from_audit: "older alerts from the audit log",
  grouped: "related alerts within {ms} ms", more_symbols: "{n} more: type to narrow", condition_value: "Value", condition: "Condition",
  probability_col: "Probability", model_version: "Model", stage_latency: "Stage latencies", kept: "kept",
  name_col: "Name", value_col: "Value", no_more: "no more alerts",
  creating: "Creating…", expiring: "Expiring…", retry: "Retry", create_failed: "Not created", expire_failed: "Not expired",
};

const zh: Record<keyof typeof en, string> = {
  alerts: "预警", symbol: "个股", latency: "延迟", models: "模型", silences: "静默", audit: "审计日志",
  connected: "实时", disconnected: "重新连接中…",
  type: "类型", severity: "级别", model: "模型", any: "全部", time: "时间", price: "价格", values: "指标",
  latency_us: "延迟 µs", silenced: "已静默", rules: "规则", clear: "清空", shown: "条",
  last: "最新价", volume: "成交量", bid: "买", ask: "卖", qty: "数量", ladder: "盘口", open: "打开",
  price_volume: "价格与成交量（标注预警）", probability: "模型概率",
  no_probability: "尚无模型为该股票打分：仅规则。",
  receive_to_alert: "接收 → 预警 延迟 (µs)", per_stage: "各阶段耗时 (µs，最近一秒)",
  stage: "阶段", throughput: "吞吐量", events_per_s: "事件/秒", alerts_per_s: "预警/秒",
  batching: "批大小与排队等待",
  no_batcher: "本进程没有模型批处理器（仅规则）：有模型服务时显示批大小与排队等待。",
  serving: "模型推理服务", inference_e2e: "推理端到端：入队 → 结果 (µs)",
  queue_compute: "每批排队等待与计算 (µs)", batch_dist: "批大小分布（最近 60 秒）",
  drops_failures: "按原因的丢弃与失败（每秒）", batches: "批", inferences_per_s: "推理/秒",
  mean_batch: "平均批大小", queue_wait: "排队等待", compute: "计算", failed: "失败批次",
  fallback: "CPU 重试", reason: "原因", last_s: "最近一秒", since_start: "启动以来", threshold: "阈值",
  superseded: "被新窗口取代", deadline: "超时", queue_full: "队列已满", switches: "后端切换",
  name: "名称", version: "版本", stage_col: "阶段", metrics: "指标", actions: "操作",
  promote: "上线", rollback: "回滚", shadow: "影子运行", no_models: "本进程没有模型注册表。",
  model_from_file: "由文件加载（--model）：上线、影子运行和回滚需要模型注册表。",
  confirm_action: "确定{action} {name} {version}？",
  new_silence: "新建静默", duration_min: "时长（分钟）", comment: "备注", create: "创建",
  active: "生效中", expired: "已过期", expire: "结束", muted: "已静默数", ends: "结束时间", matchers: "匹配条件",
  search: "搜索", since: "起始", until: "截止", limit: "条数", results: "条结果", zone: "交易所时区",
  no_audit: "本进程没有审计库。", error: "错误", symbols: "股票", pick_symbol: "选择股票",
  total: "总计", book: "盘口", features: "特征", detect: "检测", emit: "发出",
  info: "提示", warning: "警告", critical: "严重",
  pause: "暂停", resume: "继续", paused_new: "已暂停：{n} 条新预警", hover_paused: "指针在列表上时暂停刷新",
  details: "详情", alert_detail: "预警", book_not_recorded: "该预警未记录盘口。",
  book_at_alert: "预警时的盘口", no_history: "该时间附近没有保留的价格历史（实时数据保留最近 10 分钟的逐笔点，之前每分钟一个点）。",
  chart_around: "预警前后的价格与成交量（交易所时间）", conditions: "指标与阈值",
  feature_row: "特征", model_window: "模型输入窗口", no_features: "未记录特征（没有审计库）。",
  exchange_time: "交易所时间", prev_close: "昨收", change: "涨跌幅", phase: "交易阶段", currency: "币种", lot: "每手",
  page: "页", prev_page: "‹ 较新", next_page: "较旧 ›", export_csv: "导出 CSV", older_from_audit: "来自审计日志的更早预警",
  grouped: "{ms} 毫秒内的相关预警", more_symbols: "还有 {n} 个：输入以筛选", condition_value: "数值", condition: "条件",
  probability_col: "概率", model_version: "模型", stage_latency: "各阶段延迟", kept: "保留",
  name_col: "名称", value_col: "数值", no_more: "没有更多预警",
  creating: "创建中…", expiring: "结束中…", retry: "重试", create_failed: "未创建", expire_failed: "未结束",
};

// Alert type names (src/detect/alert.h) in both languages.
const types: Record<string, [string, string]> = {
  rapid_rise: ["Rapid rise", "快速拉升"], accelerating_drop: ["Accelerating drop", "加速下跌"],
  high_dive: ["High dive", "高台跳水"], large_buy: ["Large buy", "大笔买入"], large_sell: ["Large sell", "大笔卖出"],
  limit_up_sealed: ["Limit-up sealed", "封涨停"], limit_up_opened: ["Limit-up opened", "打开涨停"],
  limit_down_sealed: ["Limit-down sealed", "封跌停"], limit_down_opened: ["Limit-down opened", "打开跌停"],
  limit_up_queue_shrink: ["Limit-up queue shrink", "封单量骤减"], spread_widening: ["Spread widening", "价差扩大"],
  book_imbalance: ["Book imbalance", "盘口失衡"], volume_burst: ["Volume burst", "放量"],
  large_order: ["Large order", "大单挂单"], model: ["Model", "模型预警"],
};
export const alertTypes = Object.keys(types);

export type Key = keyof typeof en;
let lang: Lang = (localStorage.getItem("ts_lang") as Lang) === "zh" ? "zh" : "en";

export function t(key: Key): string {
  return (lang === "zh" ? zh : en)[key];
}
export function tf(key: Key, vars: Record<string, string | number>): string {
  return t(key).replace(/\{(\w+)\}/g, (_, k) => String(vars[k] ?? ""));
}
export function typeLabel(type: string): string {
  const pair = types[type];
  return pair ? pair[lang === "zh" ? 1 : 0] : type;
}
export function getLang(): Lang {
  return lang;
}
export function setLang(l: Lang): void {
  lang = l;
  localStorage.setItem("ts_lang", l);
  document.documentElement.lang = l === "zh" ? "zh-CN" : "en";
}
