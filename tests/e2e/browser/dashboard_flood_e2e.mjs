// End-to-end, under a flood (issue 27): the simulator's 400 symbols with low thresholds raise some
// 400 alerts a second into a real ticksentry `run`; two tabs of Debian's chromium (headless,
// playwright-core) show the live feed. Checks what a user sees:
//  1. each alert reaches the screen within 100 ms (median over both tabs; the page records, per
//     alert, the time from the server's stream write, wall_ms, to the render that showed it:
//     window.__tsFeedLagMs). Judged where the load average is at most the CPU count; on a machine
//     shared beyond that, the page's own part (arrival → on screen) must be within 100 ms and the
//     whole within 1 s, and the output says the target was not judged;
//  2. related alerts of one symbol within 5 ms are one line with their count (when the flood has
//     such pairs), columns sort on a click, and pages reach past the 5,000 kept in the page into
//     the audit log.
// --bench FILE writes the measured numbers as JSON (machine, commit, date).
// Exit 0 = pass, 1 = fail (with the reason), 77 = skipped (dashboard or playwright-core not built).
//
// usage: node dashboard_flood_e2e.mjs --bin build/release/src/app/ticksentry --out DIR [--bench FILE] [--seconds 15]
import { execSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { cpus, hostname, loadavg } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, "../../..");
const args = Object.fromEntries(process.argv.slice(2).reduce((acc, a, i, all) => (a.startsWith("--") ? [...acc, [a.slice(2), all[i + 1]]] : acc), []));
const bin = resolve(args.bin ?? join(repo, "build/release/src/app/ticksentry"));
const out = resolve(args.out ?? join(repo, "build/e2e-browser-flood"));
const seconds = Number(args.seconds ?? 15);
const chromiumPath = process.env.CHROMIUM ?? "/usr/bin/chromium";
function skip(why) {
  console.log(`SKIP: ${why}`);
  process.exit(77);
}
if (!existsSync(join(repo, "web/node_modules/playwright-core"))) skip("web/node_modules missing: run `npm ci` in web/ (make build does)");
if (!existsSync(join(repo, "web/dist/index.html"))) skip("web/dist missing: run `npm run build` in web/ (make build does)");
if (!existsSync(chromiumPath)) throw new Error(`no chromium at ${chromiumPath} (apt-get install chromium)`);
if (!existsSync(bin)) throw new Error(`no ticksentry binary at ${bin}`);
const { chromium } = createRequire(join(repo, "web/package.json"))("playwright-core");

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const token = "flood-" + Math.random().toString(16).slice(2);
const port = 20000 + Math.floor(Math.random() * 2000);
const base = `http://127.0.0.1:${port}`;
// The same load as tests/pipeline/silence_load_test.cpp: a spread of a tick and a half-lopsided
// book, each at most once a second per symbol.
writeFileSync(join(out, "load.toml"), "[rules]\nrelative = false\n[rules.spread_widening]\nmin_ticks = 1.0\ncooldown_ms = 1000\n" +
  "[rules.book_imbalance]\nmin_abs_imbalance_5 = 0.5\nmin_depth_lots = 0\nhold_ms = 0\ncooldown_ms = 1000\n");
const proc = spawn(bin, ["run", "--config", "load.toml", "--symbols", "400", "--speed", "1", "--duration", String(seconds + 560),
  "--http", `127.0.0.1:${port}`, "--http-token", token, "--no-stdout", "--jsonl", "", "--audit-db", "audit.db", "--log-level", "warn"],
{ cwd: out, stdio: ["ignore", "inherit", "pipe"] });
let stderr = "";
proc.stderr.on("data", (d) => { stderr += d; });
let exited = false;
proc.on("exit", () => { exited = true; });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const auth = { headers: { Authorization: `Bearer ${token}` } };
async function alertsTotal() {
  const m = await (await fetch(`${base}/metrics`, auth)).text();
  return [...m.matchAll(/^ticksentry_alerts_total(?:\{[^}]*\})? ([0-9.e+]+)$/gm)].reduce((s, x) => s + Number(x[1]), 0);
}
const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(q * s.length))] : NaN;
};

let browser;
let failed = null;
const result = {};
try {
  for (let i = 0; ; i++) {
    if (exited) throw new Error(`ticksentry exited early:\n${stderr}`);
    try { if ((await fetch(`${base}/healthz`)).ok) break; } catch { /* not yet */ }
    if (i > 120) throw new Error("no /healthz within 60 s");
    await sleep(500);
  }
  browser = await chromium.launch({ executablePath: chromiumPath, headless: true, args: ["--no-sandbox", "--disable-gpu"] });
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  const tabs = [await context.newPage(), await context.newPage()];
  const errors = [];
  for (const p of tabs) {
    p.setDefaultTimeout(60_000);
    p.on("pageerror", (e) => errors.push(String(e)));
  }
  await tabs[0].goto(`${base}/?token=${token}`);  // sets the cookie for the context
  await tabs[1].goto(`${base}/#/alerts`);
  for (const p of tabs) await p.waitForFunction(() => document.querySelectorAll("[data-testid=alert-row]").length >= 20);
  // Measure: both tabs following the flood for `seconds`.
  for (const p of tabs) await p.evaluate(() => { window.__tsFeedLagMs.length = 0; window.__tsRecvLagMs.length = 0; window.__tsRenderMs.length = 0; window.__tsPageLagMs.length = 0; });
  const a0 = await alertsTotal();
  const t0 = Date.now();
  await sleep(seconds * 1000);
  const rate = (await alertsTotal() - a0) / ((Date.now() - t0) / 1000);
  const lags = await Promise.all(tabs.map((p) => p.evaluate(() => window.__tsFeedLagMs.slice())));
  const recv = (await Promise.all(tabs.map((p) => p.evaluate(() => window.__tsRecvLagMs.slice())))).flat();
  const all = lags.flat();
  const renders = (await Promise.all(tabs.map((p) => p.evaluate(() => window.__tsRenderMs.slice())))).flat();
  result.renders = renders.length;
  result.visibility = await Promise.all(tabs.map((p) => p.evaluate(() => document.visibilityState)));
  result.renders_per_tab = await Promise.all(tabs.map((p) => p.evaluate(() => window.__tsRenderMs.length)));
  result.render_median_ms = Math.round(quantile(renders, 0.5) * 100) / 100;
  result.render_p95_ms = Math.round(quantile(renders, 0.95) * 100) / 100;
  const pageLags = (await Promise.all(tabs.map((p) => p.evaluate(() => window.__tsPageLagMs.slice())))).flat();
  result.page_median_ms = quantile(pageLags, 0.5);
  result.page_p95_ms = quantile(pageLags, 0.95);
  result.arrival_median_ms = quantile(recv, 0.5);
  result.arrival_p95_ms = quantile(recv, 0.95);
  result.alerts_per_s = Math.round(rate);
  result.tabs = lags.map((l) => ({ alerts: l.length, median_ms: quantile(l, 0.5), p95_ms: quantile(l, 0.95), max_ms: Math.max(...l) }));
  result.median_ms = quantile(all, 0.5);
  result.p95_ms = quantile(all, 0.95);
  console.log(`flood: ${result.alerts_per_s} alerts/s; stream → row on screen over ${all.length} alerts in 2 tabs: ` +
    `median ${result.median_ms} ms, p95 ${result.p95_ms} ms; of which server → page arrival median ${result.arrival_median_ms} ms, p95 ${result.arrival_p95_ms} ms, arrival → on screen median ${result.page_median_ms} ms, p95 ${result.page_p95_ms} ms; ${result.renders} renders, script median ${result.render_median_ms} ms, p95 ${result.render_p95_ms} ms, per tab ${result.renders_per_tab} (${result.visibility}) (per tab: ${result.tabs.map((x) => `${x.alerts} alerts, median ${x.median_ms}, p95 ${x.p95_ms}, max ${x.max_ms}`).join("; ")})`);
  // ~400/s on an idle 2-core machine; a loaded one raises fewer: below 200 the check means little.
  if (rate < 200) throw new Error(`the flood reached only ${rate.toFixed(0)} alerts/s (wanted ~400)`);
  if (result.tabs.some((x) => x.alerts < seconds * 50)) throw new Error(`a tab showed too few alerts: ${JSON.stringify(result.tabs)}`);
  // The 100 ms target is judged where the machine has its CPUs to give (1-min load average at most
  // the CPU count). On a machine shared beyond that (CI on a busy host) each process gets a slice
  // of a core and the server's own stream write waits its turn: there the page's own part
  // (arrival → on screen) must still be within 100 ms and the whole within 1 s (it was 3.6 s
  // median before the batching), and the run says the target was not judged.
  result.load_average = Math.round(loadavg()[0] * 10) / 10;
  result.cpus = cpus().length;
  result.target_judged = result.load_average <= result.cpus;
  if (result.target_judged) {
    if (!(result.median_ms <= 100)) throw new Error(`alerts reached the screen in ${result.median_ms} ms median (limit 100)`);
  } else {
    console.log(`flood: load average ${result.load_average} on ${result.cpus} CPUs: the 100 ms end-to-end target is not judged on this machine`);
    if (!(result.page_median_ms <= 100)) throw new Error(`the page took ${result.page_median_ms} ms median from an alert's arrival to its row (limit 100)`);
    if (!(result.median_ms <= 1000)) throw new Error(`alerts reached the screen in ${result.median_ms} ms median (limit 1000 on a loaded machine)`);
  }
  await tabs[0].screenshot({ path: join(out, "flood-alerts.png") });

  // Grouped lines, sorting and paging on tab 0, paused (rows still while we read them).
  const p = tabs[0];
  await p.click("[data-testid=feed-pause]");
  result.grouped_lines = await p.evaluate(() => document.querySelectorAll("[data-testid=alert-row]:not([data-count='1'])").length);
  const groupOk = await p.evaluate(() => [...document.querySelectorAll("[data-testid=alert-row]:not([data-count='1'])")]
    .every((r) => (r.querySelector("[data-testid=group-count]")?.textContent ?? "").startsWith(`+${Number(r.getAttribute("data-count")) - 1}`)));
  if (!groupOk) throw new Error("a grouped line does not show its count");
  // The grouping rule on a sealed/opened pair 2 ms apart with another symbol's alert between
  // them, and a third alert of the symbol 40 ms later: two lines for the symbol, the first of 2.
  const rule = await p.evaluate(() => {
    const ms = 1_000_000, t0 = 1675215000000 * ms;
    const mk = (id, symbol, type, dt) => ({ id, symbol, type, severity: "critical", exch_ts_ns: String(t0 + dt), price: 1, values: [], latency_ns: { total: 0 } });
    const g = window.__tsGroupAlerts([mk(4, "600519.SH", "limit_up_sealed", 42 * ms), mk(3, "600519.SH", "limit_up_opened", 2 * ms),
      mk(2, "000001.SZ", "large_buy", 1 * ms), mk(1, "600519.SH", "limit_up_sealed", 0)]);
    return g.map((x) => `${x.head.symbol}:${x.members.length}`).join(",");
  });
  if (rule !== "600519.SH:1,600519.SH:2,000001.SZ:1") throw new Error(`grouping rule: ${rule}`);
  await p.click("[data-testid=sort-symbol]");
  const syms = await p.evaluate(() => [...document.querySelectorAll("[data-testid=alert-row]")].map((r) => r.getAttribute("data-symbol")));
  if (syms.some((s, i) => i > 0 && syms[i - 1].localeCompare(s) > 0)) throw new Error(`sorted by symbol, yet: ${syms.slice(0, 10).join(", ")}`);
  await p.click("[data-testid=sort-time]");
  // To the last page of the kept alerts, then one more: older alerts from the audit log.
  const kept = await p.evaluate(() => Number((document.querySelector("[data-testid=alert-count]")?.textContent ?? "").split("/")[1]));
  let pages = 0;
  for (let tries = 0; pages < 150 && tries < 15 && !(await p.isDisabled("[data-testid=page-next]")); pages++) {
    const before = await p.textContent("[data-testid=page-number]");
    const count = await p.textContent("[data-testid=alert-count]");
    await p.evaluate(() => { document.querySelector("[data-testid=page-end]").textContent = ""; });
    await p.click("[data-testid=page-next]");
    await p.waitForFunction(([b, c]) => document.querySelector("[data-testid=page-number]")?.textContent !== b ||
      document.querySelector("[data-testid=alert-count]")?.textContent !== c ||
      (document.querySelector("[data-testid=page-end]")?.textContent ?? "") !== "", [before, count]);
    if ((await p.textContent("[data-testid=alert-count]")).includes("audit")) break;
    if (await p.textContent("[data-testid=page-end]")) { tries++; await sleep(2000); }  // the audit sink catching up
  }
  const countText = await p.textContent("[data-testid=alert-count]");
  result.kept = kept;
  result.pages_walked = pages;
  console.log(`flood: ${result.grouped_lines} grouped lines on page 1; sorted by symbol; ${kept} kept, ${pages} pages on: "${countText}"`);
  const endText = await p.textContent("[data-testid=page-end]");
  if (kept >= 5000 && !countText.includes("audit")) throw new Error(`paging stopped at the kept alerts: ${countText} (${endText})`);
  await p.screenshot({ path: join(out, "flood-paged.png") });
  if (errors.length) throw new Error(`page errors: ${errors.join("; ")}`);
} catch (e) {
  failed = e;
} finally {
  if (browser) await browser.close();
  proc.kill("SIGINT");
  for (let i = 0; i < 100 && !exited; i++) await sleep(100);
  if (!exited) proc.kill("SIGKILL");
}
if (args.bench) {
  let commit = "unknown";
  try { commit = execSync("git rev-parse --short HEAD", { cwd: repo }).toString().trim(); } catch { /* not a checkout */ }
  writeFileSync(resolve(args.bench), JSON.stringify({ bench: "dashboard_flood", machine: `${hostname()} ${cpus().length} cpu ${cpus()[0]?.model ?? ""}`,
    commit, date: new Date().toISOString(), seconds, passed: !failed, ...result }, null, 2) + "\n");
}
if (failed) {
  console.error(`FAIL: ${failed.stack ?? failed}\n--- ticksentry stderr (tail) ---\n${stderr.slice(-3000)}`);
  process.exit(1);
}
console.log(`PASS: screenshots in ${out}`);
