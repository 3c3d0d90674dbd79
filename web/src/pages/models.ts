// Model versions with their stage and metrics; promote, roll back, shadow (src/http/admin_api.h).
import { api } from "../api";
import { el, Page } from "../dom";
import { t } from "../i18n";

interface ModelVersion {
  name: string; version: string; stage: string; created_ms: number; metrics: Record<string, number>;
  source?: string; // set when the model was loaded from a file (--model), not from a registry
}

export const modelsPage: Page = (root) => {
  const msg = el("div", { class: "note", "data-testid": "models-message" });
  const body = el("tbody", { "data-testid": "models-table" });
  root.append(msg, el("div", { class: "panel" }, el("table", {},
    el("thead", {}, el("tr", {}, ...[t("name"), t("version"), t("stage_col"), t("metrics"), t("actions")].map((h) => el("th", {}, h)))), body)));
  // Promote and rollback change what serves live alerts: they ask first.
  const act = (path: string, body?: unknown, confirmText?: string) =>
    (confirmText && !window.confirm(confirmText)) ? undefined : api(path, "POST", body).then(() => { msg.className = "note"; msg.textContent = "ok"; load(); })
      .catch((e) => { msg.className = "error"; msg.textContent = `${t("error")}: ${e.message}`; });
  const ask = (action: string, m: ModelVersion) =>
    t("confirm_action").replace("{action}", action).replace("{name}", m.name).replace("{version}", m.version);
  const load = () => api<{ models: ModelVersion[] }>("api/models").then((r) => {
    const fromFile = r.models.some((m) => m.source);
    if (fromFile) msg.textContent = t("model_from_file");
    body.replaceChildren(...r.models.map((m) => el("tr", {},
      el("td", {}, m.name), el("td", {}, m.version), el("td", {}, el("span", { class: "badge" }, m.stage)),
      el("td", {}, Object.entries(m.metrics).map(([k, v]) => `${k}=${v}`).join(", ")),
      el("td", {}, ...(m.source ? [m.source] : [
        el("button", { onclick: () => act(`api/models/${encodeURIComponent(m.name)}/promote`, { version: m.version }, ask(t("promote"), m)) }, t("promote")), " ",
        el("button", { onclick: () => act(`api/models/${encodeURIComponent(m.name)}/shadow`, { version: m.version }) }, t("shadow")), " ",
        el("button", { onclick: () => act(`api/models/${encodeURIComponent(m.name)}/rollback`, undefined, ask(t("rollback"), m)) }, t("rollback"))])))));
  }).catch((e) => { msg.textContent = e.status === 503 ? t("no_models") : `${t("error")}: ${e.message}`; });
  load();
  return () => {};
};
