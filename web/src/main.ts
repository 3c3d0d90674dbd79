// The dashboard's shell: header navigation, language toggle, live-stream status, hash routing
// (#/alerts, #/alert/ID, #/symbol/AAPL, #/latency, #/models, #/silences, #/audit).
import "./style.css";
import { stream } from "./api";
import { el, Page } from "./dom";
import { getLang, Key, setLang, t } from "./i18n";
import { alertPage } from "./pages/alert";
import { alertsPage } from "./pages/alerts";
import { auditPage } from "./pages/audit";
import { latencyPage } from "./pages/latency";
import { modelsPage } from "./pages/models";
import { silencesPage } from "./pages/silences";
import { symbolPage } from "./pages/symbol";

const pages: Record<string, [Key, Page]> = {
  alerts: ["alerts", alertsPage],
  symbol: ["symbol", symbolPage],
  latency: ["latency", latencyPage],
  models: ["models", modelsPage],
  silences: ["silences", silencesPage],
  audit: ["audit", auditPage],
};
// Reached from links, not listed in the navigation.
const hidden: Record<string, [Key, Page]> = { alert: ["alert_detail", alertPage] };

let teardown: () => void = () => {};
let live = false;

function route(): void {
  const [name, ...rest] = location.hash.replace(/^#\/?/, "").split("/");
  const key = pages[name] || hidden[name] ? name : "alerts";
  const nav = document.getElementById("nav")!;
  nav.replaceChildren(
    ...Object.entries(pages).map(([k, [label]]) =>
      el("a", { href: `#/${k}`, class: k === key || (key === "alert" && k === "alerts") ? "active" : "", "data-testid": `nav-${k}` }, t(label)),
    ),
  );
  document.getElementById("lang")!.textContent = getLang() === "en" ? "中文" : "English";
  renderConn();
  teardown();
  const root = document.getElementById("page")!;
  root.replaceChildren();
  teardown = (pages[key] ?? hidden[key])[1](root, decodeURIComponent(rest.join("/")));
}

function renderConn(): void {
  const c = document.getElementById("conn")!;
  c.textContent = live ? "● " + t("connected") : "○ " + t("disconnected");
  c.className = "conn " + (live ? "on" : "off");
}

document.getElementById("lang")!.addEventListener("click", () => {
  setLang(getLang() === "en" ? "zh" : "en");
  route();
});
window.addEventListener("hashchange", route);
stream.onState = (on) => {
  live = on;
  renderConn();
};
setLang(getLang());
stream.connect();
route();
