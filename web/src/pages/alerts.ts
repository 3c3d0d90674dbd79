// The live alert feed: newest first, filtered by type, severity, symbol and model (source).
// Starts with the server's recent alerts, then follows the "alert" stream.
//  - Pause: the button, or the pointer over the feed, holds the rows still (new alerts wait in a
//    counter), so a click lands on the row it was aimed at.
//  - Related alerts of one symbol within kGroupNs of exchange time (a limit sealed/opened pair
//    1–3 ms apart) are one line with their count.
//  - Columns sort by a click on their header; pages of kPageRows lines; past the kMaxKept alerts
//    kept here, "Older" pages through the audit log (GET /api/alerts?until_ns=).
//  - Updates are batched: at most one render per animation frame, or where the browser gives the
//    tab few frames, at most one per kMinRenderGapMs (an alert after a quiet spell renders at
//    once, with no fixed wait); the visible page only, with rows built once per alert (a render
//    moves only the rows that changed). window.__tsFeedLagMs records,
//    per alert, the time from the server's stream write (wall_ms) to the render that showed it
//    (alerts held by a pause are not counted).
import { Alert, alertHref, api, rememberAlert, stream } from "../api";
import { el, Page } from "../dom";
import { exchNs, fmtExchTime, fmtLatency, fmtPrice, marketOf, valuesText } from "../format";
import { alertTypes, t, tf, typeLabel } from "../i18n";

const kMaxKept = 5000;
const kPageRows = 50;
const kGroupNs = 5_000_000;  // 5 ms: a sealed/opened pair 1–3 ms apart is one event
const kMinRenderGapMs = 16;  // renders from the timer: at most one per frame's worth of time
const sevRank: Record<string, number> = { info: 0, warning: 1, critical: 2 };

export interface Group { head: Alert; members: Alert[] }

// Groups a newest-first list: an alert joins the open group of its symbol when it lies within
// `windowNs` of that group's last member. `maxGroups`: stop once that many groups are complete
// (the feed's first pages need only theirs; the list is read no further).
export function groupAlerts(list: Iterable<Alert>, windowNs = kGroupNs, maxGroups = Infinity): Group[] {
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
    // Time runs back: once `windowNs` past the newest page-closing group, those groups are whole.
    if (out.length >= maxGroups && exchNs(out[maxGroups - 1].members[out[maxGroups - 1].members.length - 1]) - ts > windowNs) break;
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
  const values = valuesText(a);
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
    el("td", { class: "values", title: values }, values),
    el("td", { class: "num" }, fmtLatency(a.latency_ns?.total)),
    el("td", {}, a.silenced_by ? el("span", { class: "badge", "data-testid": "silenced-badge" }, `${t("silenced")} ${a.silenced_by}`) : ""),
    el("td", {}, el("a", { href: alertHref(a), "data-testid": "alert-open" }, t("details"))),
  );
}

// Puts `rows` into `body` with the fewest DOM moves: under a flood the new rows go in at the top
// and the oldest leave at the bottom; the rest stay where they are (no re-layout of every row).
function patchRows(body: HTMLElement, rows: HTMLElement[]): void {
  for (let i = 0; i < rows.length; i++) {
    const at = body.children[i] ?? null;
    if (at !== rows[i]) body.insertBefore(rows[i], at);
  }
  while (body.children.length > rows.length) body.lastElementChild!.remove();
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
  // Per alert, ms from the server's stream write (wall_ms) to: the render that showed it; its
  // arrival in the page (the stream's part of the former).
  // __tsRenderMs: each render's own time (scripting; layout and paint follow it).
  // __tsPageLagMs: arrival in the page to the render that showed it (the page's own part).
  interface Window { __tsGroupAlerts?: typeof groupAlerts; __tsFeedLagMs?: number[]; __tsRecvLagMs?: number[]; __tsPageLagMs?: number[]; __tsRenderMs?: number[] }
}

export const alertsPage: Page = (root) => {
  window.__tsGroupAlerts = groupAlerts;  // the browser tests check the grouping rule on it
  const alerts: Alert[] = [];    // live, newest first, at most kMaxKept
  const older: Alert[] = [];     // fetched from the audit log past the kept ones
  const incoming: Alert[] = [];  // arrived while paused
  let sort: { key: SortKey; desc: boolean } = { key: "time", desc: true };
  let page = 0;
  let pausedByButton = false, hovering = false;
  let auditDone = false;
  const fresh: Alert[] = [];  // from the stream since the last render (their wall_ms: the write time)
  window.__tsFeedLagMs = window.__tsFeedLagMs ?? [];
  window.__tsRecvLagMs = window.__tsRecvLagMs ?? [];
  const recvLag = window.__tsRecvLagMs;
  window.__tsPageLagMs = window.__tsPageLagMs ?? [];
  const pageLag = window.__tsPageLagMs;
  window.__tsRenderMs = window.__tsRenderMs ?? [];
  const renderMs = window.__tsRenderMs;

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
  const pageEnd = el("span", { class: "note", "data-testid": "page-end" });
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

  function* filtered(): Generator<Alert> {
    for (const a of alerts) if (matches(a)) yield a;
    for (const a of older) if (matches(a)) yield a;
  }
  // PERF NOTE: under a flood (400 alerts/s, two tabs) a render groups only what the page shows
  // (time order, the default) and reuses row nodes; the full count for the pager is refreshed at
  // most once a second. Grouping all 5,000 per frame kept the browser busy on a loaded machine.
  let totalGroups = 0, totalAt = 0;
  const render = () => {
    const t0 = performance.now();
    const need = (page + 1) * kPageRows;
    let groups: Group[];
    const now0 = Date.now();
    if (sort.key === "time" && sort.desc) {
      groups = groupAlerts(filtered(), kGroupNs, need);
      if (now0 - totalAt > 1000 || groups.length < need) {
        totalGroups = groups.length < need ? groups.length : groupAlerts(filtered()).length;
        totalAt = now0;
      }
    } else {
      groups = groupAlerts(filtered());
      const cmp = sorters[sort.key];
      groups.sort((x, y) => (sort.desc ? -1 : 1) * cmp(x.head, y.head) || exchNs(y.head) - exchNs(x.head));
      totalGroups = groups.length;
    }
    const pages = Math.max(1, Math.ceil(Math.max(totalGroups, groups.length) / kPageRows));
    if (page >= pages) page = pages - 1;
    const shown = groups.slice(page * kPageRows, (page + 1) * kPageRows);
    const rows = shown.map(rowFor);
    patchRows(body, rows);
    if (rowCache.size > 4 * kPageRows) {  // keep only the rows on screen
      const keep = new Set(rows);
      for (const [k, r] of rowCache) if (!keep.has(r)) rowCache.delete(k);
    }
    // Each alert that arrived since the last render is on screen now (its row, or the count it
    // joined when newer rows pushed it down): the time since the server wrote it.
    const now = Date.now();
    const lag = window.__tsFeedLagMs!;
    for (const a of fresh) {
      if (a.wall_ms) lag.push(now - a.wall_ms);
      pageLag.push(now - (a._recv_ms as number));
    }
    if (pageLag.length > 20000) pageLag.splice(0, 10000);
    fresh.length = 0;
    renderMs.push(performance.now() - t0);
    if (renderMs.length > 5000) renderMs.splice(0, 2500);
    if (lag.length > 20000) lag.splice(0, lag.length - 20000);
    const total = alerts.length + older.length;
    count.textContent = `${Math.max(totalGroups, groups.length)} ${t("shown")} / ${total}${older.length ? ` (${older.length} ${t("older_from_audit")})` : ""}`;
    pager.replaceChildren(
      el("button", { type: "button", "data-testid": "page-prev", disabled: page === 0, onclick: () => { page--; render(); } }, t("prev_page")),
      el("span", { "data-testid": "page-number" }, ` ${t("page")} ${page + 1} / ${pages} `),
      el("button", { type: "button", "data-testid": "page-next", disabled: page + 1 >= pages && auditDone,
        onclick: () => { if (page + 1 < pages) { page++; render(); } else loadOlder(); } }, t("next_page")), pageEnd);
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
      const got = r.alerts.filter((a) => !have.has(String(a.id)));
      // None older (yet: the audit sink may be behind the stream): say so; a later click asks again.
      pageEnd.textContent = got.length ? "" : t("no_more");
      older.push(...got);
      if (got.length) page++;
      totalAt = 0;  // recount the pages
      render();
    }).catch((e) => { auditDone = true; pageEnd.textContent = `${t("no_more")} (${e.message})`; render(); });
  };

  // At most one render per animation frame under bursts. A tab the browser gives few frames to
  // (a second tab in one window: measured 18 frames in 15 s against 195 in the front one) renders
  // from a timer instead, so its rows are current when it is looked at. The timer waits only for
  // the rest of kMinRenderGapMs since the last render: an alert after a quiet spell renders on
  // the next task. (It waited a fixed 50 ms before: in such a tab every alert was 50 ms late.)
  let pending = false, rafId = 0, timerId = 0, renderedAt = -Infinity;
  const run = () => {
    if (!pending) return;
    pending = false;
    cancelAnimationFrame(rafId);
    clearTimeout(timerId);
    if (!paused()) {
      renderedAt = performance.now();
      render();
    }
  };
  const schedule = () => {
    if (pending || paused()) return;
    pending = true;
    rafId = requestAnimationFrame(run);
    timerId = window.setTimeout(run, Math.max(0, kMinRenderGapMs - (performance.now() - renderedAt)));
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
    el("table", { class: "feed" }, el("colgroup", {}, ...["9em", "8em", "14em", "6em", "7em", "", "7em", "9em", "5em"].map((w) =>
      el("col", { style: w ? `width:${w}` : undefined }))), head, body));
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
    const recvMs = Date.now();
    a._recv_ms = recvMs;
    if (a.wall_ms) recvLag.push(recvMs - a.wall_ms);
    if (recvLag.length > 20000) recvLag.splice(0, 10000);
    addModel(a);
    if (paused()) {
      incoming.push(a);
      if (incoming.length > kMaxKept) incoming.splice(0, incoming.length - kMaxKept);
      updatePause();
      return;
    }
    alerts.unshift(a);
    fresh.push(a);
    if (fresh.length > 20000) fresh.splice(0, 10000);  // a tab the browser does not paint
    if (alerts.length > kMaxKept) alerts.length = kMaxKept;
    schedule();
  });
  return () => { off(); pending = false; cancelAnimationFrame(rafId); clearTimeout(timerId); };
};
