// End-to-end: a real ticksentry replaying real LOBSTER data ($TICKSENTRY_DATA_DIR, else
// <repo>/../shared/data; skipped, naming the file, where it is absent) with its dashboard,
// driven by Debian's chromium (headless) through playwright-core. Checks what a user sees:
//  1. the alert feed fills from the live stream;
//  2. the symbol page's chart renders (canvas drawn, price shown) and the order-book ladder fills;
//     With the shipped model (models/default.onnx, threshold 0.3) scoring every symbol, the symbol
//     page also draws the model's probability series;
//  3. the latency page shows the per-stage breakdown and the serving panels draw (inference end
//     to end, batch-size distribution, drops/failures table); every ticksentry_* metric the
//     Grafana board (grafana/ticksentry.json) queries is on /metrics (GPU ones where a GPU is);
//  4. a silence created in the UI is listed, mutes the next matching alert (marked "silenced" in
//     the feed) while other symbols' alerts stay unmuted, and is expired from the UI;
//  5. the alert feed's model filter keeps the model's alerts only; the language toggle switches the
//     labels to Chinese;
//  6. (issue 27) the feed pauses (button, pointer on it) without re-rendering its rows; an alert
//     opens its detail view at its own time the same from the feed, the symbol page and the audit
//     page (exchange time with date and zone, values whose conditions hold, feature row, book or
//     "book not recorded", price history around it); the symbol page keeps the API's history in
//     exchange time; the picker finds a symbol case-insensitively, by symbol or by its name (from
//     an --instruments file's `name` column), and the symbol page shows the name; the audit page
//     has column headers, pages and a CSV export, its time filters read the exchange's zone
//     (shown), and a model alert opened from it shows its probability; values and latencies read
//     in units.
// Screenshots of every page go to --out (ctest: the build tree); --docs DIR also copies them to
// DIR/dashboard-<page>.png. Exit 0 = pass, 1 = fail (with the reason), 77 = skipped (the dashboard
// or playwright-core is not built here, or the data is absent).
//
// usage: node dashboard_e2e.mjs --bin build/release/src/app/ticksentry --out DIR [--docs docs]
import { spawn } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, "../../..");
const args = Object.fromEntries(process.argv.slice(2).reduce((acc, a, i, all) => (a.startsWith("--") ? [...acc, [a.slice(2), all[i + 1]]] : acc), []));
const bin = resolve(args.bin ?? join(repo, "build/release/src/app/ticksentry"));
const out = resolve(args.out ?? join(repo, "build/e2e-browser"));
const data = process.env.TICKSENTRY_DATA_DIR || join(repo, "../shared/data");  // set: only there
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
const token = "e2e-" + Math.random().toString(16).slice(2);
const port = 18000 + Math.floor(Math.random() * 2000);
const base = `http://127.0.0.1:${port}`;
const files = ["GOOG", "AAPL"].map((s) => join(data, "lobster", `${s}_2012-06-21_34200000_57600000_message_${s === "GOOG" ? 10 : 1}.csv.gz`));
for (const f of files) if (!existsSync(f)) skip(`needs the real data: ${f} is missing (set TICKSENTRY_DATA_DIR to the data folder)`);

// The shipped model scores every symbol; threshold 0.3 makes GOOG's day raise model alerts.
const model = join(repo, "models/default.onnx");
const config = join(out, "model.toml");
writeFileSync(config, `[model]\npath = "${model}"\nthreshold = 0.3\nhysteresis = 0.05\ncooldown_s = 60\n`);
// Instrument names: no feed carries them; the reference file's `name` column does.
const instruments = join(out, "instruments.csv");
writeFileSync(instruments, "symbol,board,name\nGOOG,nasdaq,Alphabet Inc. Class C\nAAPL,nasdaq,Apple Inc.\n");

// Real time × 20: the opening minutes of the day (where alerts cluster) play for the whole test.
const proc = spawn(bin, ["replay", "--format", "lobster", ...files, "--speed", "20", "--duration", "300", "--config", config,
  "--instruments", instruments, "--http", `127.0.0.1:${port}`, "--http-token", token, "--no-stdout", "--jsonl", "",
  "--audit-db", join(out, "audit.db"), "--log-level", "warn"], { cwd: out, stdio: ["ignore", "inherit", "pipe"] });  // cwd: the silences database is the test's own
let stderr = "";
proc.stderr.on("data", (d) => { stderr += d; });
let exited = false;
proc.on("exit", () => { exited = true; });

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function waitHealthy() {
  for (let i = 0; i < 120; i++) {
    if (exited) throw new Error(`ticksentry exited early:\n${stderr}`);
    try {
      const r = await fetch(`${base}/healthz`);
      if (r.ok) return;
    } catch { /* not listening yet */ }
    await sleep(500);
  }
  throw new Error("ticksentry's /healthz did not answer within 60 s");
}

// The detail view of alert `id`: exchange time with date and zone, values whose conditions hold,
// the feature row (the audit store has it), the book or "book not recorded", the chart around the
// alert (history points) with the alert's second inside it.
async function checkDetail(page, id, from) {
  await page.waitForFunction(() => (document.querySelector("[data-testid=detail-time]")?.textContent ?? "").length > 10);
  const time = await page.textContent("[data-testid=detail-time]");
  if (!/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} \S+/.test(time)) throw new Error(`detail time lacks date or zone: ${time}`);
  await page.waitForFunction(() => document.querySelectorAll("[data-testid=feature-row]").length >= 5);
  await page.waitForFunction(() => document.querySelector("[data-testid=detail-book], [data-testid=detail-book-none]") !== null);
  await page.waitForFunction(() => Number(document.querySelector("[data-testid=detail-chart]")?.dataset.points ?? 0) > 0 ||
    (document.querySelector("[data-testid=detail-chart-note]")?.textContent ?? "").length > 0);
  const d = await page.evaluate(() => ({
    values: [...document.querySelectorAll("[data-testid=detail-value]")].map((r) => [r.getAttribute("data-name"), r.children[1].textContent, r.children[2].textContent]),
    features: document.querySelectorAll("[data-testid=feature-row]").length,
    book: document.querySelector("[data-testid=detail-book]") ? document.querySelectorAll("[data-testid=detail-book] tbody tr").length : "not recorded",
    points: Number(document.querySelector("[data-testid=detail-chart]")?.dataset.points ?? 0),
    at: Number(document.querySelector("[data-testid=detail-chart]")?.dataset.alertTime ?? 0),
    note: document.querySelector("[data-testid=detail-chart-note]")?.textContent ?? "",
    probability: document.querySelector("[data-testid=detail-probability]")?.textContent ?? null,
  }));
  if (!d.values.length) throw new Error(`alert ${id}: no values in the detail view`);
  if (d.points === 0) throw new Error(`alert ${id}: no price history around the alert (${d.note})`);
  console.log(`detail from ${from}: alert ${id} at ${time}, ${d.values.length} values (${d.values.map((v) => v.join(" ")).join("; ")}), ` +
    `${d.features} features, book ${d.book}, ${d.points} chart points (${d.note})${d.probability ? `, p ${d.probability}` : ""}`);
  return d;
}

const shots = [];
async function shot(page, name) {
  const path = join(out, `dashboard-${name}.png`);
  await page.screenshot({ path });
  shots.push([name, path]);
}

let browser;
let failed = null;
try {
  await waitHealthy();
  browser = await chromium.launch({ executablePath: chromiumPath, headless: true, args: ["--no-sandbox", "--disable-gpu"] });
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  page.setDefaultTimeout(90_000);
  const consoleErrors = [];
  page.on("pageerror", (e) => consoleErrors.push(String(e)));

  // 1. The alert feed fills (the login link sets the cookie and drops the token from the URL).
  await page.goto(`${base}/?token=${token}`);
  await page.waitForSelector("[data-testid=conn].on");
  await page.waitForFunction(() => document.querySelectorAll("[data-testid=alert-row]").length >= 3);
  console.log(`alert feed: ${await page.locator("[data-testid=alert-row]").count()} rows`);
  await shot(page, "alerts");

  // 1b. Pause: the button holds the rows still while alerts keep arriving (counted), Resume
  // shows them; the pointer on the feed holds it too, so a click lands on the row aimed at.
  const rowIds = () => page.evaluate(() => [...document.querySelectorAll("[data-testid=alert-row]")].map((r) => r.getAttribute("data-id")).join(","));
  const feedTotal = () => page.evaluate(() => Number((document.querySelector("[data-testid=alert-count]")?.textContent ?? "").split("/")[1]) || 0);
  await page.click("[data-testid=feed-pause]");
  const pausedIds = await rowIds();
  await page.waitForFunction(() => /[1-9]/.test(document.querySelector("[data-testid=feed-paused]")?.textContent ?? ""));
  await sleep(1500);
  if ((await rowIds()) !== pausedIds) throw new Error("the paused feed re-rendered its rows");
  const heldNote = await page.textContent("[data-testid=feed-paused]");
  const before = await feedTotal();
  await page.click("[data-testid=feed-pause]");
  await page.waitForFunction((n) => Number((document.querySelector("[data-testid=alert-count]")?.textContent ?? "").split("/")[1]) > n, before);
  console.log(`pause: rows held still while "${heldNote}"; resumed to ${await feedTotal()} alerts`);
  await page.hover("[data-testid=alert-row] >> nth=2");
  const hoverIds = await rowIds();
  await page.waitForFunction(() => /[1-9]/.test(document.querySelector("[data-testid=feed-paused]")?.textContent ?? ""));
  await sleep(1000);
  if ((await rowIds()) !== hoverIds) throw new Error("the feed re-rendered under the pointer");
  // Numbers as a trader reads them: no raw detector names, latencies with a unit.
  const cells = await page.evaluate(() => [...document.querySelectorAll("[data-testid=alert-row]")].slice(0, 50)
    .map((r) => [r.children[5].textContent, r.children[6].textContent]));
  for (const [values, lat] of cells) {
    if (/_ticks|\w=\S/.test(values)) throw new Error(`raw detector values in the feed: ${values}`);
    if (!/(ns|µs|ms| s|–)$/.test(lat)) throw new Error(`latency without a unit: ${lat}`);
  }

  // 1c. The detail view at the alert's own time, from the feed (the row under the pointer).
  const aimed = await page.getAttribute("[data-testid=alert-row] >> nth=2", "data-id");
  await page.click("[data-testid=alert-row] >> nth=2 >> [data-testid=alert-open]");
  await page.waitForFunction((id) => location.hash === `#/alert/${id}`, aimed);
  const detail = await checkDetail(page, aimed, "feed");
  await shot(page, "alert-detail");

  // 2. The symbol page: chart drawn, price shown, ladder filled.
  await page.goto(`${base}/#/symbol/GOOG`);
  await page.waitForFunction(() => /\d/.test(document.querySelector("[data-testid=symbol-price]")?.textContent ?? ""));
  await page.waitForFunction(() => document.querySelectorAll("[data-testid=ladder] tbody tr").length >= 2);
  await page.waitForSelector("[data-testid=price-chart] canvas");
  await sleep(3000);  // a few more seconds of live points on the chart
  const drawn = await page.evaluate(() => {
    // The chart's main canvas has non-background pixels (a drawn line), not just an empty frame.
    const canvases = [...document.querySelectorAll("[data-testid=price-chart] canvas")];
    return canvases.some((c) => {
      const ctx = c.getContext("2d");
      if (!ctx || c.width < 50 || c.height < 50) return false;
      const px = ctx.getImageData(0, 0, c.width, c.height).data;
      for (let i = 0; i < px.length; i += 4) if (px[i + 2] > 200 && px[i] < 120) return true;  // the blue price line
      return false;
    });
  });
  if (!drawn) throw new Error("the price chart has no line drawn");
  // The model's probability: its chart replaces the "rules only" note and draws its line.
  await page.waitForSelector("[data-testid=probability-chart] canvas");
  await page.waitForFunction(() => {
    const canvases = [...document.querySelectorAll("[data-testid=probability-chart] canvas")];
    return canvases.some((c) => {
      const ctx = c.getContext("2d");
      if (!ctx || c.width < 50 || c.height < 50) return false;
      const px = ctx.getImageData(0, 0, c.width, c.height).data;
      for (let i = 0; i < px.length; i += 4) if (px[i] > 150 && px[i] < 210 && px[i + 1] > 110 && px[i + 1] < 170 && px[i + 2] > 230) return true;  // #b48eff
      return false;
    });
  });
  const modelRows = await page.locator("[data-testid=alert-row][data-type=model]").count();
  console.log(`symbol page: probability series drawn; ${modelRows} model alerts of GOOG listed`);
  await shot(page, "symbol");

  // 2b. The symbol page keeps the history the API returns (not only the seconds since it opened),
  // in exchange time: the replayed day, 2012-06-21, not today.
  const hist = await (await fetch(`${base}/api/symbols/GOOG`, { headers: { Authorization: `Bearer ${token}` } })).json();
  await page.goto(`${base}/#/alerts`);
  await page.mouse.move(5, 5);  // the pointer off the feed (resting on it pauses it)
  await page.goto(`${base}/#/symbol/GOOG`);
  await page.waitForFunction((n) => Number(document.querySelector("[data-testid=price-chart]")?.dataset.points ?? 0) >= n, Math.min(hist.history.length, 600) - 2);
  const firstT = Number(await page.getAttribute("[data-testid=price-chart]", "data-first"));
  // (The feed drops its oldest point each second once full: allow the page's fetch a few of them.)
  if (firstT > hist.history[Math.min(5, hist.history.length - 1)][0] + 1) throw new Error(`the chart starts at ${firstT}, after the history's first points ${hist.history.slice(0, 6).map((p) => p[0])}`);
  if (new Date(firstT * 1000).toISOString().slice(0, 10) !== "2012-06-21") throw new Error(`the chart is not on the replayed day: ${new Date(firstT * 1000).toISOString()}`);
  const phase = await page.textContent("[data-testid=symbol-phase]");
  console.log(`symbol history: ${hist.history.length} points from the API kept on the chart (from ${new Date(firstT * 1000).toISOString()}), phase ${phase}`);
  await page.waitForFunction(() => document.querySelector("[data-testid=symbol-name]")?.textContent === "Alphabet Inc. Class C");
  // The picker searches every symbol, case-insensitively, by symbol or by name.
  const options = () => page.evaluate(() => [...document.querySelectorAll("[data-testid=symbol-option]")].map((a) => a.getAttribute("data-symbol")).join(","));
  await page.fill("[data-testid=symbol-input]", "aap");
  await page.waitForFunction(() => [...document.querySelectorAll("[data-testid=symbol-option]")].map((a) => a.getAttribute("data-symbol")).join(",") === "AAPL");
  await page.fill("[data-testid=symbol-input]", "apple");
  await page.waitForFunction(() => [...document.querySelectorAll("[data-testid=symbol-option]")].map((a) => a.getAttribute("data-symbol")).join(",") === "AAPL");
  const named = await page.textContent("[data-testid=symbol-option-name]");
  if (!named.includes("Apple Inc.")) throw new Error(`the picker does not show AAPL's name: ${named}`);
  await page.fill("[data-testid=symbol-input]", "ALPHABET");
  await page.waitForFunction(() => [...document.querySelectorAll("[data-testid=symbol-option]")].map((a) => a.getAttribute("data-symbol")).join(",") === "GOOG");
  console.log(`picker: "aap" and "apple" find AAPL, "ALPHABET" finds ${await options()} (names from the instruments file)`);
  // The detail view from the symbol page's alert list.
  await page.waitForSelector("[data-testid=symbol-alerts] [data-testid=alert-row]");
  const symAlert = await page.getAttribute("[data-testid=symbol-alerts] [data-testid=alert-row] >> nth=0", "data-id");
  const symType = await page.getAttribute("[data-testid=symbol-alerts] [data-testid=alert-row] >> nth=0", "data-type");
  await page.click("[data-testid=symbol-alerts] [data-testid=alert-row] >> nth=0 >> td >> nth=2");
  await page.waitForFunction((id) => location.hash === `#/alert/${id}`, symAlert);
  const symDetail = await checkDetail(page, symAlert, "symbol page");
  // A model alert's detail carries the probability against the threshold.
  if (symType === "model" && !symDetail.probability) throw new Error(`model alert ${symAlert}: no probability in the detail view`);

  // 3. Latency: per-stage breakdown rows.
  await page.goto(`${base}/#/latency`);
  await page.waitForFunction(() => document.querySelectorAll("[data-testid=stage-table] tr").length === 5);
  // Serving panels: shown (not the "no batcher" note), a batch-size bar with batches in it, the
  // drops/failures table, and a drawn end-to-end latency line (P50 green, P99 orange, P999 red).
  await page.waitForSelector("[data-testid=serving-panels]", { state: "visible" });
  await page.waitForFunction(() => [...document.querySelectorAll("[data-testid=batch-bar]")].some((b) => Number(b.getAttribute("data-count")) > 0));
  await page.waitForFunction(() => document.querySelector("[data-testid=drops-table] tr[data-reason=failed]") !== null);
  await sleep(3000);  // a few points on the charts
  const servingDrawn = await page.evaluate(() => {
    const canvases = [...document.querySelectorAll("[data-testid=serving-e2e-chart] canvas")];
    return canvases.some((c) => {
      const ctx = c.getContext("2d");
      if (!ctx || c.width < 50 || c.height < 50) return false;
      const px = ctx.getImageData(0, 0, c.width, c.height).data;
      for (let i = 0; i < px.length; i += 4) if (px[i + 1] > 140 && px[i] < 80 && px[i + 2] < 130) return true;  // #30a46c
      return false;
    });
  });
  if (!servingDrawn) throw new Error("the inference end-to-end chart has no line drawn");
  console.log(`serving panels: ${await page.locator("[data-testid=batch-bar]").count()} batch-size buckets, ` +
    `${await page.textContent("[data-testid=serving-rate]")}`);
  await page.evaluate(() => document.querySelector("[data-testid=serving-panels]").scrollIntoView());
  await shot(page, "serving");
  await page.evaluate(() => window.scrollTo(0, 0));
  await shot(page, "latency");

  // The Grafana board queries only metrics this process exports.
  const metrics = await (await fetch(`${base}/metrics`, { headers: { Authorization: `Bearer ${token}` } })).text();
  const board = readFileSync(join(repo, "grafana/ticksentry.json"), "utf8");
  const wanted = new Set([...board.matchAll(/ticksentry_[a-z0-9_]+/g)].map((m) => m[0].replace(/_(bucket|sum|count)$/, "")));
  // Counters with a label per kind appear on their first count (no input errors in this replay).
  const lazy = new Set(["ticksentry_input_errors_total"]);
  const missing = [...wanted].filter((n) => !n.startsWith("ticksentry_gpu_") && !lazy.has(n) &&
    !new RegExp(`^${n}(_bucket|_sum|_count)?[{ ]`, "m").test(metrics));
  if (missing.length) throw new Error(`the Grafana board queries metrics /metrics lacks: ${missing.join(", ")}`);
  console.log(`grafana: all ${wanted.size} metrics it queries are exported (GPU ones need a GPU)`);

  // 4. A silence created in the UI mutes the next matching alert.
  await page.goto(`${base}/#/silences`);
  await page.fill("[data-testid=silence-symbol]", "GOOG");
  await page.fill("[data-testid=silence-comment]", "e2e: mute GOOG");
  await page.click("[data-testid=silence-create]");
  await page.waitForSelector("[data-testid=silence-message][data-state=done]");  // pending, then done
  await page.waitForSelector("[data-testid=silence-row][data-active=true]");
  const silenceId = await page.getAttribute("[data-testid=silence-row][data-active=true]", "data-id");
  await page.goto(`${base}/#/alerts`);
  await page.mouse.move(5, 5);  // the pointer off the feed (resting on it pauses it)
  await page.waitForFunction((id) => [...document.querySelectorAll("[data-testid=alert-row][data-symbol=GOOG]")]
    .some((r) => r.querySelector("[data-testid=silenced-badge]")?.textContent?.includes(id)), silenceId);
  console.log(`silence ${silenceId} muted a GOOG alert`);
  const unmutedAfter = await page.evaluate(() => [...document.querySelectorAll("[data-testid=alert-row]:not(.silenced)")]
    .filter((r) => r.getAttribute("data-symbol") === "GOOG").length);
  const mutedOther = await page.evaluate(() => [...document.querySelectorAll("[data-testid=alert-row].silenced")]
    .filter((r) => r.getAttribute("data-symbol") !== "GOOG").length);
  if (mutedOther > 0) throw new Error(`${mutedOther} alerts of other symbols were muted by a GOOG silence`);
  console.log(`unmuted GOOG rows from before the silence: ${unmutedAfter}`);
  await shot(page, "alerts-silenced");
  await page.goto(`${base}/#/silences`);
  await page.waitForSelector("[data-testid=silence-row][data-active=true]");
  await shot(page, "silences");
  await page.click("[data-testid=silence-expire]");
  await page.waitForSelector(`[data-testid=silence-row][data-id="${silenceId}"][data-active=false]`);

  // 5. Models (a --model file, no registry: listed, with a note), audit search, Chinese labels.
  // This process serves a --model file: the page lists it and says why it has no actions.
  await page.goto(`${base}/#/models`);
  await page.waitForFunction(() => (document.querySelector("[data-testid=models-message]")?.textContent ?? "").includes("--model"));
  const servedRows = await page.evaluate(() => document.querySelectorAll("[data-testid=models-table] tr").length);
  if (servedRows < 1) throw new Error("the models page lists no model for a --model deployment");
  console.log(`models page: ${servedRows} model served from a file, no promote/rollback offered`);
  await shot(page, "models");
  await page.goto(`${base}/#/audit`);
  await page.fill("[data-testid=audit-symbol]", "GOOG");
  await page.fill("[data-testid=audit-limit]", "5");
  await page.click("[data-testid=audit-search]");
  await page.waitForFunction(() => { const n = document.querySelectorAll("[data-testid=audit-results] tr").length; return n >= 1 && n <= 5; });
  const heads = await page.evaluate(() => [...document.querySelectorAll("[data-testid=audit-table] thead th")].map((h) => h.textContent).filter(Boolean));
  if (heads.length < 6) throw new Error(`the audit table has too few column headers: ${heads.join(", ")}`);
  // The time filters are exchange time in GOOG's zone, shown beside them: 09:30–09:35 New York
  // time is 13:30–13:35 UTC on 2012-06-21; the page lists exactly what /api/alerts gives there.
  await page.waitForFunction(() => (document.querySelector("[data-testid=audit-since-label]")?.textContent ?? "").includes("America/New_York"));
  await page.fill("[data-testid=audit-since]", "2012-06-21T09:30:00");
  await page.fill("[data-testid=audit-until]", "2012-06-21T09:35:00");
  await page.fill("[data-testid=audit-limit]", "1000");
  await page.click("[data-testid=audit-search]");
  const want = await (await fetch(`${base}/api/alerts?symbol=GOOG&since_ns=1340285400000000000&until_ns=1340285700000000000&limit=1000`,
    { headers: { Authorization: `Bearer ${token}` } })).json();
  if (!want.alerts.length) throw new Error("no GOOG alert between 09:30 and 09:35 New York time to compare with");
  await page.waitForFunction((n) => document.querySelectorAll("[data-testid=audit-results] tr").length === n, want.alerts.length);
  const ids = await page.evaluate(() => [...document.querySelectorAll("[data-testid=audit-results] tr")].map((r) => r.getAttribute("data-id")));
  if (ids.join(",") !== want.alerts.map((a) => String(a.id)).join(",")) throw new Error(`audit 09:30–09:35 New York: ${ids} vs the API's ${want.alerts.map((a) => a.id)}`);
  console.log(`audit: 09:30–09:35 America/New_York lists the ${ids.length} GOOG alerts /api/alerts has in 13:30–13:35 UTC`);
  await page.evaluate(() => { for (const k of ["audit-since", "audit-until"]) document.querySelector(`[data-testid=${k}]`).value = ""; });
  await page.fill("[data-testid=audit-limit]", "5");
  await shot(page, "audit");
  // Paging (every symbol: GOOG alone may have 5 alerts or fewer): page 2 holds the next 5, none of page 1's.
  await page.fill("[data-testid=audit-symbol]", "");
  await page.click("[data-testid=audit-search]");
  await page.waitForFunction(() => document.querySelectorAll("[data-testid=audit-results] tr").length === 5 &&
    [...document.querySelectorAll("[data-testid=audit-results] tr")].some((r) => r.getAttribute("data-symbol") !== "GOOG"));
  const page1 = await page.evaluate(() => [...document.querySelectorAll("[data-testid=audit-results] tr")].map((r) => r.getAttribute("data-id")));
  await page.click("[data-testid=audit-next]");
  await page.waitForFunction(() => (document.querySelector("[data-testid=audit-page]")?.textContent ?? "").includes("2"));
  await page.waitForFunction((ids) => { const now = [...document.querySelectorAll("[data-testid=audit-results] tr")].map((r) => r.getAttribute("data-id"));
    return now.length > 0 && !now.some((id) => ids.includes(id)); }, page1);
  // CSV export of the page shown: a header and one line per row.
  const [download] = await Promise.all([page.waitForEvent("download"), page.click("[data-testid=audit-csv]")]);
  const csvPath = join(out, "audit-page2.csv");
  await download.saveAs(csvPath);
  const csv = readFileSync(csvPath, "utf8").trim().split("\n");
  const rowsOnPage = await page.locator("[data-testid=audit-results] tr").count();
  if (!csv[0].startsWith("id,exch_ts_ns,exchange_time") || csv.length !== rowsOnPage + 1) throw new Error(`CSV export: ${csv.length} lines for ${rowsOnPage} rows: ${csv[0]}`);
  console.log(`audit: ${heads.length} column headers, page 2 of ${rowsOnPage} other alerts, CSV ${csv.length - 1} rows`);
  // The detail view from the audit page.
  const auditId = await page.getAttribute("[data-testid=audit-results] tr >> nth=0", "data-id");
  await page.click("[data-testid=audit-results] tr >> nth=0 >> td >> nth=3");
  await page.waitForFunction((id) => location.hash === `#/alert/${id}`, auditId);
  await checkDetail(page, auditId, "audit page");
  // A model alert opened from the audit page shows its probability (the store keeps its score).
  await page.goto(`${base}/#/audit`);
  await page.selectOption("[data-testid=audit-type]", "model");
  await page.click("[data-testid=audit-search]");
  await page.waitForFunction(() => [...document.querySelectorAll("[data-testid=audit-results] tr")].some((r) => r.getAttribute("data-type") === "model"));
  const modelId = await page.getAttribute("[data-testid=audit-results] tr[data-type=model] >> nth=0", "data-id");
  await page.click("[data-testid=audit-results] tr[data-type=model] >> nth=0 >> td >> nth=3");
  await page.waitForFunction((id) => location.hash === `#/alert/${id}`, modelId);
  await page.waitForFunction(() => (document.querySelector("[data-testid=detail-probability]")?.textContent ?? "").length > 0);
  const auditModel = await checkDetail(page, modelId, "audit page (model alert)");
  if (!auditModel.probability) throw new Error(`model alert ${modelId} from the audit page: no probability`);
  // The feed's model filter: "default" (the serving model's name) keeps only its alerts.
  await page.goto(`${base}/#/alerts`);
  await page.mouse.move(5, 5);  // the pointer off the feed (resting on it pauses it)
  await page.waitForSelector("[data-testid=filter-model] option[value=default]", { state: "attached" });
  await page.selectOption("[data-testid=filter-model]", "default");
  await page.waitForFunction(() => document.querySelectorAll("[data-testid=alert-row]").length >= 1);
  const types = await page.evaluate(() => [...document.querySelectorAll("[data-testid=alert-row]")].map((r) => r.getAttribute("data-type")));
  if (types.some((x) => x !== "model")) throw new Error(`the model filter shows non-model alerts: ${types.join(", ")}`);
  console.log(`model filter: ${types.length} model alerts`);
  await page.click("[data-testid=lang-toggle]");
  await page.waitForFunction(() => document.querySelector("[data-testid=nav-alerts]")?.textContent === "预警");
  await page.goto(`${base}/#/alerts`);
  await page.mouse.move(5, 5);  // the pointer off the feed (resting on it pauses it)
  await page.waitForFunction(() => document.querySelectorAll("[data-testid=alert-row]").length >= 1);
  await shot(page, "alerts-zh");
  if (consoleErrors.length) throw new Error(`page errors: ${consoleErrors.join("; ")}`);
} catch (e) {
  failed = e;
  try {
    const pages = browser ? browser.contexts().flatMap((c) => c.pages()) : [];
    if (pages[0]) await pages[0].screenshot({ path: join(out, "failure.png") });
  } catch { /* best effort */ }
} finally {
  if (browser) await browser.close();
  proc.kill("SIGINT");
  for (let i = 0; i < 100 && !exited; i++) await sleep(100);
  if (!exited) proc.kill("SIGKILL");
}
if (failed) {
  console.error(`FAIL: ${failed.stack ?? failed}\n--- ticksentry stderr (tail) ---\n${stderr.slice(-3000)}`);
  process.exit(1);
}
if (args.docs) {
  mkdirSync(resolve(args.docs), { recursive: true });
  for (const [name, path] of shots) copyFileSync(path, join(resolve(args.docs), `dashboard-${name}.png`));
}
console.log(`PASS: screenshots in ${out}`);
