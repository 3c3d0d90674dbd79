// Silences: create (symbol / type / severity matchers, duration), list, expire; each write shows
// its pending state until the server answers and its failure (with the reason) if it fails.
import { api } from "../api";
import { el, fmtTime, Page } from "../dom";
import { alertTypes, t, typeLabel } from "../i18n";

interface Silence { id: string; symbol: string; type: string; severity: string; comment: string; created_by: string;
  starts_at_ms: number; ends_at_ms: number; active: boolean; muted: number; matchers: string[] }

export const silencesPage: Page = (root) => {
  const sym = el("input", { placeholder: "AAPL", size: 10, "data-testid": "silence-symbol" });
  const type = el("select", { "data-testid": "silence-type" }, el("option", { value: "" }, t("any")),
    ...alertTypes.map((x) => el("option", { value: x }, typeLabel(x))));
  const sev = el("select", { "data-testid": "silence-severity" }, el("option", { value: "" }, t("any")),
    ...["info", "warning", "critical"].map((x) => el("option", { value: x }, t(x as "info"))));
  const mins = el("input", { type: "number", value: 60, min: 1, size: 5, "data-testid": "silence-minutes" });
  const comment = el("input", { size: 24, required: true, "data-testid": "silence-comment" });
  const msg = el("div", { "data-testid": "silence-message" });
  const body = el("tbody", { "data-testid": "silence-table" });

  const load = () => api<{ silences: Silence[] }>("api/silences").then((r) => {
    body.replaceChildren(...r.silences.map((s) => el("tr", { "data-testid": "silence-row", "data-id": s.id, "data-active": String(s.active) },
      el("td", {}, s.id),
      el("td", {}, (s.matchers ?? []).join(" ")),
      el("td", {}, s.comment), el("td", {}, el("span", { class: "badge" }, s.active ? t("active") : t("expired"))),
      el("td", {}, fmtTime(s.ends_at_ms)), el("td", { class: "num" }, String(s.muted)),
      el("td", {}, s.active ? expireButton(s) : ""))));
  }).catch((e) => { msg.className = "error"; msg.textContent = e.message; });

  // Pending and failed states: the button says what is happening and stays disabled until the
  // server answered; a failure keeps the form filled and says why (a retry is one click).
  const expireButton = (s: Silence) => {
    const b = el("button", { "data-testid": "silence-expire", "data-state": "idle" }, t("expire"));
    b.addEventListener("click", () => {
      b.disabled = true;
      b.dataset.state = "pending";
      b.textContent = t("expiring");
      api(`api/silences/${encodeURIComponent(s.id)}/expire`, "POST").then(load).catch((e) => {
        b.disabled = false;
        b.dataset.state = "failed";
        b.textContent = t("retry");
        msg.className = "error";
        msg.dataset.state = "failed";
        msg.textContent = `${t("expire_failed")} ${s.id}: ${e.message}`;
      });
    });
    return b;
  };
  const create = (e: Event) => {
    e.preventDefault();
    createBtn.disabled = true;
    createBtn.textContent = t("creating");
    msg.className = "note";
    msg.dataset.state = "pending";
    msg.textContent = t("creating");
    api<Silence>("api/silences", "POST", { symbol: sym.value.trim(), type: type.value, severity: sev.value,
      duration_s: Number(mins.value) * 60, comment: comment.value, created_by: "dashboard" })
      .then((s) => { msg.className = "note"; msg.dataset.state = "done"; msg.textContent = `${s.id} ${t("active")}`; load(); })
      .catch((err) => { msg.className = "error"; msg.dataset.state = "failed"; msg.textContent = `${t("create_failed")}: ${err.message}`; })
      .finally(() => { createBtn.disabled = false; createBtn.textContent = t("create"); });
  };
  const createBtn = el("button", { "data-testid": "silence-create" }, t("create"));
  root.append(el("div", { class: "panel" }, el("h3", {}, t("new_silence")),
    el("form", { class: "row", onsubmit: create, "data-testid": "silence-form" },
      el("label", {}, t("symbol"), sym), el("label", {}, t("type"), type), el("label", {}, t("severity"), sev),
      el("label", {}, t("duration_min"), mins), el("label", {}, t("comment"), comment),
      createBtn), msg),
    el("div", { class: "panel", style: "margin-top:16px" }, el("table", {},
      el("thead", {}, el("tr", {}, ...["id", t("matchers"), t("comment"), "", t("ends"), t("muted"), ""].map((h) => el("th", {}, h)))), body)));
  load();
  const poll = setInterval(load, 5000);
  return () => clearInterval(poll);
};
