// The live alert feed: newest first, filtered by type, severity, symbol and model (source).
// Starts with the server's recent alerts, then follows the "alert" stream.
import { Alert, api, stream } from "../api";
import { el, fmtNum, fmtTime, Page } from "../dom";
import { alertTypes, t, typeLabel } from "../i18n";

const kMaxRows = 500;

function valuesText(a: Alert): string {
  return a.values
    .map((v) => `${v.name}=${fmtNum(v.value)}${v.cmp && v.cmp !== "info" ? ` (${v.cmp}${fmtNum(v.threshold)})` : ""}`)
    .join(", ");
}

export function alertRow(a: Alert): HTMLTableRowElement {
  const when = a.wall_ms ?? a.exch_ts_ns / 1e6;
  return el(
    "tr",
    { class: a.silenced_by ? "silenced" : "", "data-testid": "alert-row", "data-symbol": a.symbol, "data-type": a.type },
    el("td", {}, fmtTime(when)),
    el("td", {}, el("a", { href: `#/symbol/${encodeURIComponent(a.symbol)}` }, a.symbol)),
    el("td", {}, typeLabel(a.type)),
    el("td", { class: `sev-${a.severity}` }, t(a.severity as "info")),
    el("td", { class: "num" }, fmtNum(a.price, 4)),
    el("td", {}, valuesText(a)),
    el("td", { class: "num" }, a.latency_ns?.total > 0 ? fmtNum(a.latency_ns.total / 1e3, 1) : "–"),
    el("td", {}, a.silenced_by ? el("span", { class: "badge", "data-testid": "silenced-badge" }, `${t("silenced")} ${a.silenced_by}`) : ""),
  );
}

export const alertsPage: Page = (root) => {
  const alerts: Alert[] = [];
  const typeSel = el("select", { "data-testid": "filter-type" }, el("option", { value: "" }, t("any")),
    ...alertTypes.map((x) => el("option", { value: x }, typeLabel(x))));
  const sevSel = el("select", { "data-testid": "filter-severity" }, el("option", { value: "" }, t("any")),
    ...["info", "warning", "critical"].map((x) => el("option", { value: x }, t(x as "info"))));
  const symIn = el("input", { placeholder: "AAPL", size: 10, "data-testid": "filter-symbol" });
  const modelSel = el("select", { "data-testid": "filter-model" }, el("option", { value: "" }, t("any")),
    el("option", { value: "rules" }, t("rules")));
  const count = el("span", { class: "note", "data-testid": "alert-count" });
  const body = el("tbody", { "data-testid": "alert-feed" });

  const matches = (a: Alert) =>
    (!typeSel.value || a.type === typeSel.value) &&
    (!sevSel.value || a.severity === sevSel.value) &&
    (!symIn.value || a.symbol.toUpperCase().includes(symIn.value.trim().toUpperCase())) &&
    (!modelSel.value || (a.model?.name ?? "rules") === modelSel.value);

  const render = () => {
    const shown = alerts.filter(matches).slice(0, kMaxRows);
    body.replaceChildren(...shown.map(alertRow));
    count.textContent = `${shown.length} ${t("shown")} / ${alerts.length}`;
  };
  const addModel = (a: Alert) => {
    const name = a.model?.name;
    if (name && ![...modelSel.options].some((o) => o.value === name)) modelSel.append(el("option", { value: name }, name));
  };
  for (const c of [typeSel, sevSel, modelSel]) c.addEventListener("change", render);
  symIn.addEventListener("input", render);

  root.append(
    el("div", { class: "filters" },
      el("label", {}, t("type"), typeSel), el("label", {}, t("severity"), sevSel),
      el("label", {}, t("symbol"), symIn), el("label", {}, t("model"), modelSel),
      el("button", { onclick: () => { alerts.length = 0; render(); } }, t("clear")), count),
    el("div", { class: "scroll panel" },
      el("table", {},
        el("thead", {}, el("tr", {}, ...[t("time"), t("symbol"), t("type"), t("severity")].map((h) => el("th", {}, h)),
          el("th", { class: "num" }, t("price")), el("th", {}, t("values")), el("th", { class: "num" }, t("latency_us")), el("th", {}, ""))),
        body)));

  api<Alert[]>("api/alerts/recent").then((recent) => {
    for (const a of recent) { alerts.unshift(a); addModel(a); }
    render();
  }).catch(() => render());

  let pending = false;
  const off = stream.on<Alert>("alert", (a) => {
    alerts.unshift(a);
    addModel(a);
    if (alerts.length > 5000) alerts.length = 5000;
    if (!pending) {
      pending = true;  // re-render at most once per animation frame under bursts
      requestAnimationFrame(() => { pending = false; render(); });
    }
  });
  return off;
};
