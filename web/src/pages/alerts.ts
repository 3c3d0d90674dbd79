// The live alert feed: newest first, filtered by type, severity, symbol and model (source).
// Starts with the server's recent alerts, then follows the "alert" stream.
//  - Pause: the button, or the pointer over the feed, holds the rows still (new alerts wait in a
//    counter), so a click lands on the row it was aimed at.
//  - Related alerts of one symbol within kGroupNs of exchange time (a limit sealed/opened pair
//    1–3 ms apart) are one line with their count.
//  - Columns sort by a click on their header; pages of kPageRows lines; past the kMaxKept alerts
//    kept here, "Older" pages through the audit log (GET /api/alerts?until_ns=).
//  - Updates are batched: at most one render per animation frame, of the visible page only, with
//    rows built once per alert (a render reorders existing nodes). window.__tsFeedLagMs records,
//    per alert, the time from the server's stream write (wall_ms) to its row on screen.
import { Alert, alertHref, api, rememberAlert, stream } from "../api";
import { el, Page } from "../dom";
import { exchNs, fmtExchTime, fmtLatency, fmtPrice, marketOf, valuesText } from "../format";
import { alertTypes, t, tf, typeLabel } from "../i18n";

const kMaxKept = 5000;
const kPageRows = 100;
const kGroupNs = 5_000_000;  // 5 ms: a sealed/opened pair 1–3 ms apart is one event
const sevRank: Record<string, number> = { info: 0, warning: 1, critical: 2 };

export interface Group { head: Alert; members: Alert[] }

// Groups a newest-first list: an alert joins the open group of its symbol when it lies within
// `windowNs` of that group's last member.
export function groupAlerts(list: Alert[], windowNs = kGroupNs): Group[] {
  const out: Group[] = [];
  const open = new Map<string, Group>();
  for (const a of list) {
    const g = open.get(a.symbol);
    const ts = exchNs(a);
    if (g && Math.abs(exchNs(g.members[g.members.length - 1]) - ts) <= windowNs) {
      g.members.push(a);
      if ((sevRank[a.severity] ?? 0) > (sevRank[g.head.severity] ?? 0)) g.head = a;
      continue;
    }
    const ng = { head: a, members: [a] };
    open.set(a.symbol, ng);
    out.push(ng);
  }
  return out;
}

// One feed line. `members`: the related alerts it stands for (the count is shown beside the type).
export function alertRow(a: Alert, members: Alert[] = [a]): HTMLTableRowElement {
  rememberAlert(a);
  const m = marketOf(a.symbol, a);
  const ns = exchNs(a);
  const others = members.filter((x) => x !== a);
  const open = (ev: Event) => {
    if ((ev.target as HTMLElement).closest("a")) return;  // the symbol and details links go their own way
    location.hash = alertHref(a);
  };
  return el(
    "tr",
    { class: `clickable${a.silenced_by ? " silenced" : ""}`, "data-testid": "alert-row", "data-symbol": a.symbol, "data-type": a.type,
      "data-id": String(a.id), "data-count": members.length, onclick: open },
    el("td", { title: fmtExchTime(ns, m.time_zone, true) }, fmtExchTime(ns, m.time_zone)),
    el("td", {}, el("a", { href: `#/symbol/${encodeURIComponent(a.symbol)}` }, a.symbol)),
    el("td", {}, typeLabel(a.type),
      others.length ? el("span", { class: "badge group", "data-testid": "group-count",
        title: `${tf("grouped", { ms: kGroupNs / 1e6 })}: ${others.map((x) => typeLabel(x.type)).join(", ")}` },
      `+${others.length} ${others.map((x) => typeLabel(x.type)).filter((x, i, all) => all.indexOf(x) === i).join(", ")}`) : null),
    el("td", { class: `sev-${a.severity}` }, t(a.severity as "info")),
    el("td", { class: "num" }, a.price_text && m.price_decimals === (a.price_text.split(".")[1]?.length ?? 0) ? fmtPrice(Number(a.price_text), m.price_decimals) : fmtPrice(a.price, m.price_decimals)),
    el("td", { class: "values" }, valuesText(a)),
    el("td", { class: "num" }, fmtLatency(a.latency_ns?.total)),
    el("td", {}, a.silenced_by ? el("span", { class: "badge", "data-testid": "silenced-badge" }, `${t("silenced")} ${a.silenced_by}`) : ""),
    el("td", {}, el("a", { href: alertHref(a), "data-testid": "alert-open" }, t("details"))),
  );
}

type SortKey = "time" | "symbol" | "type" | "severity" | "price" | "latency";
const sorters: Record<SortKey, (x: Alert, y: Alert) => number> = {
  time: (x, y) => exchNs(x) - exchNs(y),
  symbol: (x, y) => x.symbol.localeCompare(y.symbol),
  type: (x, y) => typeLabel(x.type).localeCompare(typeLabel(y.type)),
  severity: (x, y) => (sevRank[x.severity] ?? 0) - (sevRank[y.severity] ?? 0),
  price: (x, y) => x.price - y.price,
  latency: (x, y) => (x.latency_ns?.total ?? 0) - (y.latency_ns?.total ?? 0),
};

// The header of a feed-like table: sortable columns, `onSort` called with the clicked key.
export function alertHeader(sort: { key: SortKey; desc: boolean } | null, onSort?: (k: SortKey) => void): HTMLElement {
  const cols: [string, SortKey | null, boolean][] = [[t("exchange_time"), "time", false], [t("symbol"), "symbol", false],
    [t("type"), "type", false], [t("severity"), "severity", false], [t("price"), "price", true], [t("values"), null, false],
    [t("latency"), "latency", true], ["", null, false], ["", null, false]];
  return el("thead", {}, el("tr", {}, ...cols.map(([label, key, num]) => {
    const arrow = sort && key === sort.key ? (sort.desc ? " ▼" : " ▲") : "";
    return el("th", { class: `${num ? "num" : ""}${key && onSort ? " sortable" : ""}`, "data-sort": key ?? undefined,
      "data-testid": key ? `sort-${key}` : undefined, onclick: key && onSort ? () => onSort(key) : undefined }, label + arrow);
  })));
}

declare global {
  interface Window { __tsFeedLagMs?: number[] }
}

export const alertsPage: Page = (root) => {
  const alerts: Alert[] = [];    // live, newest first, at most kMaxKept
  const older: Alert[] = [];     // fetched from the audit log past the kept ones
  const incoming: Alert[] = [];  // arrived while paused
  let sort: { key: SortKey; desc: boolean } = { key: "time", desc: true };
  let page = 0;
  let pausedByButton = false, hovering = false;
  let auditDone = false;
  const shownIds = new Set<string>();
  const live = new Set<string>();  // ids that came over the stream (their wall_ms is the write time)
  window.__tsFeedLagMs = window.__tsFeedLagMs ?? [];

  const typeSel = el("select", { "data-testid": "filter-type" }, el("option", { value: "" }, t("any")),
    ...alertTypes.map((x) => el("option", { value: x }, typeLabel(x))));
  const sevSel = el("select", { "data-testid": "filter-severity" }, el("option", { value: "" }, t("any")),
    ...["info", "warning", "critical"].map((x) => el("option", { value: x }, t(x as "info"))));
  const symIn = el("input", { placeholder: "AAPL", size: 10, "data-testid": "filter-symbol" });
  const modelSel = el("select", { "data-testid": "filter-model" }, el("option", { value: "" }, t("any")),
    el("option", { value: "rules" }, t("rules")));
  const count = el("span", { class: "note", "data-testid": "alert-count" });
  const pauseBtn = el("button", { type: "button", "data-testid": "feed-pause" }, t("pause"));
  const pauseNote = el("span", { class: "note", "data-testid": "feed-paused" });
  const pager = el("span", { class: "pager" });
  let head: HTMLElement = el("thead", {});
  let headSort = "";
  const body = el("tbody", { "data-testid": "alert-feed" });
  const rowCache = new Map<string, HTMLTableRowElement>();

  const paused = () => pausedByButton || hovering;
  const matches = (a: Alert) =>
    (!typeSel.value || a.type === typeSel.value) &&
    (!sevSel.value || a.severity === sevSel.value) &&
    (!symIn.value || a.symbol.toUpperCase().includes(symIn.value.trim().toUpperCase())) &&
    (!modelSel.value || (a.model?.name ?? "rules") === modelSel.value);

  const rowFor = (g: Group) => {
    const key = `${g.head.id}:${g.members.length}:${g.head.silenced_by ?? ""}`;
    let r = rowCache.get(key);
    if (!r) {
      r = alertRow(g.head, g.members);
      rowCache.set(key, r);
    }
    return r;
  };

  const render = () => {
    const groups = groupAlerts([...alerts, ...older].filter(matches));
    const cmp = sorters[sort.key];
    if (!(sort.key === "time" && sort.desc)) {
      groups.sort((x, y) => (sort.desc ? -1 : 1) * cmp(x.head, y.head) || exchNs(y.head) - exchNs(x.head));
    }
    const pages = Math.max(1, Math.ceil(groups.length / kPageRows));
    if (page >= pages) page = pages - 1;
    const shown = groups.slice(page * kPageRows, (page + 1) * kPageRows);
    const rows = shown.map(rowFor);
    body.replaceChildren(...rows);
    if (rowCache.size > 4 * kPageRows) {  // keep only the rows on screen
      const keep = new Set(rows);
      for (const [k, r] of rowCache) if (!keep.has(r)) rowCache.delete(k);
    }
    const now = Date.now();
    const lag = window.__tsFeedLagMs!;
    for (const g of shown) {
      for (const a of g.members) {
        const id = String(a.id);
        if (shownIds.has(id)) continue;
        shownIds.add(id);
        if (a.wall_ms && live.has(id)) lag.push(now - a.wall_ms);
      }
    }
    if (lag.length > 20000) lag.splice(0, lag.length - 20000);
    if (shownIds.size > 3 * kMaxKept) shownIds.clear();
    const total = alerts.length + older.length;
    count.textContent = `${groups.length} ${t("shown")} / ${total}${older.length ? ` (${older.length} ${t("older_from_audit")})` : ""}`;
    pager.replaceChildren(
      el("button", { type: "button", "data-testid": "page-prev", disabled: page === 0, onclick: () => { page--; render(); } }, t("prev_page")),
      el("span", { "data-testid": "page-number" }, ` ${t("page")} ${page + 1} / ${pages} `),
      el("button", { type: "button", "data-testid": "page-next", disabled: page + 1 >= pages && auditDone,
        onclick: () => { if (page + 1 < pages) { page++; render(); } else loadOlder(); } }, t("next_page")));
    if (headSort !== `${sort.key}:${sort.desc}`) {  // the arrows follow the sort
      headSort = `${sort.key}:${sort.desc}`;
      const h = alertHeader(sort, (k) => {
        sort = { key: k, desc: sort.key === k ? !sort.desc : k === "time" || k === "severity" || k === "latency" };
        page = 0;
        render();
      });
      head.replaceWith(h);
      head = h;
    }
  };

  // Past the kept alerts: the next page from the audit log, older than the oldest listed.
  const loadOlder = () => {
    const all = [...alerts, ...older];
    const oldest = all.length ? all.reduce((m, a) => (exchNs(a) < exchNs(m) ? a : m), all[0]) : null;
    const q = new URLSearchParams({ limit: String(kPageRows * 2) });
    if (oldest) q.set("until_ns", String(oldest.exch_ts_ns));
    api<{ alerts: Alert[] }>(`api/alerts?${q}`).then((r) => {
      const have = new Set(all.map((a) => String(a.id)));
      const fresh = r.alerts.filter((a) => !have.has(String(a.id)));
      if (!fresh.length) auditDone = true;
      older.push(...fresh);
      page++;
      render();
    }).catch(() => { auditDone = true; render(); });
  };

  let pending = false;
  const schedule = () => {
    if (pending || paused()) return;
    pending = true;  // at most one render per animation frame under bursts
    requestAnimationFrame(() => { pending = false; if (!paused()) render(); });
  };
  const updatePause = () => {
    pauseBtn.textContent = pausedByButton ? t("resume") : t("pause");
    pauseBtn.classList.toggle("active", pausedByButton);
    pauseNote.textContent = paused() ? (incoming.length ? tf("paused_new", { n: incoming.length }) : hovering && !pausedByButton ? t("hover_paused") : tf("paused_new", { n: 0 })) : "";
    root.dataset.paused = String(paused());
  };
  const flushIncoming = () => {
    if (paused() || !incoming.length) return;
    for (const a of incoming) alerts.unshift(a);
    incoming.length = 0;
    if (alerts.length > kMaxKept) alerts.length = kMaxKept;
    updatePause();
    schedule();
  };
  pauseBtn.addEventListener("click", () => { pausedByButton = !pausedByButton; updatePause(); flushIncoming(); });

  const addModel = (a: Alert) => {
    const name = a.model?.name;
    if (name && ![...modelSel.options].some((o) => o.value === name)) modelSel.append(el("option", { value: name }, name));
  };
  for (const c of [typeSel, sevSel, modelSel]) c.addEventListener("change", () => { page = 0; render(); });
  symIn.addEventListener("input", () => { page = 0; render(); });

  const scroller = el("div", { class: "scroll panel", "data-testid": "feed-panel" },
    el("table", { class: "feed" }, head, body));
  scroller.addEventListener("mouseenter", () => { hovering = true; updatePause(); });
  scroller.addEventListener("mouseleave", () => { hovering = false; updatePause(); flushIncoming(); schedule(); });

  root.append(
    el("div", { class: "filters" },
      el("label", {}, t("type"), typeSel), el("label", {}, t("severity"), sevSel),
      el("label", {}, t("symbol"), symIn), el("label", {}, t("model"), modelSel),
      el("button", { type: "button", onclick: () => { alerts.length = 0; older.length = 0; incoming.length = 0; page = 0; updatePause(); render(); } }, t("clear")),
      pauseBtn, pauseNote, count, pager),
    scroller);
  render();

  api<Alert[]>("api/alerts/recent").then((recent) => {
    const have = new Set(alerts.map((a) => String(a.id)));
    for (const a of recent) if (!have.has(String(a.id))) { alerts.push(a); addModel(a); }
    alerts.sort((x, y) => exchNs(y) - exchNs(x));
    render();
  }).catch(() => render());

  const off = stream.on<Alert>("alert", (a) => {
    live.add(String(a.id));
    if (live.size > 3 * kMaxKept) live.clear();
    addModel(a);
    if (paused()) {
      incoming.push(a);
      if (incoming.length > kMaxKept) incoming.splice(0, incoming.length - kMaxKept);
      updatePause();
      return;
    }
    alerts.unshift(a);
    if (alerts.length > kMaxKept) alerts.length = kMaxKept;
    schedule();
  });
  return off;
};
