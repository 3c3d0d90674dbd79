#!/usr/bin/python3
"""Soak benchmark: `ticksentry run` on the simulator for a long time with everything on, watched.

What runs (bench/soak.sh is the entry point; see its header for the options):
  - the simulator at `speed` × real time (2 = twice the nominal rate) with its default
    per-symbol flow ([sim] events_per_s = 200 × symbols, the default's 200,000 for 1,000);
  - the rules (defaults) and a model on the CPU ([model] backend = "cpu", --model);
  - every sink: stdout (to a file), JSONL, the SQLite audit store, notifications ([notify]: one
    generic webhook receiver on loopback, served here) and the dashboard (--http on loopback);
  - a dashboard poller (every --poll-s: /healthz, /api/alerts/recent, /api/stats, /metrics) and
    one Server-Sent Events client on /api/stream counting `alert` messages.
Measured: RSS (VmRSS of the process) every --sample-s; the poller's errors and latencies; at the
end, alerts at the pipeline (the summary's alerts_total) against every sink: stdout lines,
JSONL lines, audit rows, alerts the notifier received (its closing "notify: N alerts" line),
alert ids on the SSE stream, and at the webhook every event alert's id (by id, from the JSONL
file). A limit_*_sealed alert that ends before its group's first notification is not announced
(docs/notifications.md: the _opened alert is); those are counted, not checked. Any difference,
counted error or input error is reported in "checks" and makes the exit status 1.
Writes bench/results/soak-<machine>-<yyyymmdd>[-tag].json.
"""
import argparse
import datetime
import http.server
import json
import os
import platform
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def sh(cmd):
    try:
        return subprocess.run(cmd, shell=True, capture_output=True, text=True, cwd=ROOT).stdout.strip()
    except OSError:
        return ""


class Webhook(http.server.ThreadingHTTPServer):
    """The notification receiver: records every alert id by status."""

    daemon_threads = True

    def __init__(self):
        self.lock = threading.Lock()
        self.posts = 0
        self.bad = 0
        self.firing = {}    # alert id (str) → times notified firing
        self.types = {}     # alert id (str) → its type label
        self.resolved = set()
        super().__init__(("127.0.0.1", 0), WebhookHandler)


class WebhookHandler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n)
        srv = self.server
        try:
            doc = json.loads(body)
            with srv.lock:
                srv.posts += 1
                for a in doc.get("alerts", []):
                    aid = str(a["alertId"])
                    srv.types[aid] = (a.get("labels") or {}).get("type", "")
                    if a.get("status") == "resolved":
                        srv.resolved.add(aid)
                    else:
                        srv.firing[aid] = srv.firing.get(aid, 0) + 1
        except (ValueError, KeyError):
            with srv.lock:
                srv.bad += 1
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args):
        pass


def percentile(xs, p):
    if not xs:
        return None
    s = sorted(xs)
    return s[min(len(s) - 1, int(round(p / 100.0 * (len(s) - 1))))]


class Poller(threading.Thread):
    """Polls the dashboard like a browser left open: counts answers, errors, latencies."""

    PATHS = ["/healthz", "/api/alerts/recent", "/api/stats", "/metrics"]

    def __init__(self, base, token, every_s, stop):
        super().__init__(daemon=True)
        self.base, self.token, self.every_s, self.stop = base, token, every_s, stop
        self.ok = {p: 0 for p in self.PATHS}
        self.errors = {p: 0 for p in self.PATHS}
        self.first_errors = []
        self.error_times = []   # monotonic time of each failure
        self.latency_ms = {p: [] for p in self.PATHS}
        self.last_metrics = ""

    def get(self, path, timeout=10):
        req = urllib.request.Request(self.base + path, headers={"Authorization": "Bearer " + self.token})
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read()

    def run(self):
        while not self.stop.is_set():
            for p in self.PATHS:
                t0 = time.monotonic()
                try:
                    status, body = self.get(p)
                    if status != 200:
                        raise IOError("HTTP %d" % status)
                    self.ok[p] += 1
                    self.latency_ms[p].append((time.monotonic() - t0) * 1e3)
                    if p == "/metrics":
                        self.last_metrics = body.decode("utf-8", "replace")
                except Exception as e:  # noqa: BLE001 - every failure counts
                    if self.stop.is_set():
                        return
                    self.errors[p] += 1
                    self.error_times.append(time.monotonic())
                    if len(self.first_errors) < 10:
                        self.first_errors.append("%s: %s" % (p, e))
            self.stop.wait(self.every_s)


class Stream(threading.Thread):
    """One SSE client on /api/stream counting alert messages (the dashboard's alert sink)."""

    def __init__(self, base, token, stop):
        super().__init__(daemon=True)
        self.base, self.token, self.stop = base, token, stop
        self.alert_ids = set()
        self.alert_messages = 0
        self.connects = 0
        self.errors = []

    def run(self):
        while not self.stop.is_set():
            try:
                req = urllib.request.Request(self.base + "/api/stream", headers={"Authorization": "Bearer " + self.token})
                with urllib.request.urlopen(req, timeout=30) as r:
                    self.connects += 1
                    event = None
                    for raw in r:
                        line = raw.decode("utf-8", "replace").rstrip("\n")
                        if line.startswith("event:"):
                            event = line[6:].strip()
                        elif line.startswith("data:") and event == "alert":
                            self.alert_messages += 1
                            try:
                                self.alert_ids.add(str(json.loads(line[5:])["id"]))
                            except (ValueError, KeyError):
                                pass
                        elif line == "":
                            event = None
            except Exception as e:  # noqa: BLE001
                if self.stop.is_set():
                    return
                if len(self.errors) < 10:
                    self.errors.append(str(e))
                self.stop.wait(1)


def rss_kb(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def metric_sum(text, name):
    total = 0.0
    for line in text.splitlines():
        if line.startswith(name + "{") or line.startswith(name + " "):
            total += float(line.rsplit(" ", 1)[1])
    return total


# Alert types with an end (docs/notifications.md): a sealed alert that ends (…_opened) before its
# group's first notification is not announced by design — the opened alert is. Every other alert
# is an event and must reach the webhook.
ENDING_TYPES = {"limit_up_sealed", "limit_down_sealed"}


def jsonl_types(paths):
    """alert id (str) → type, from the JSONL sink."""
    out = {}
    for p in paths:
        with open(p) as f:
            for line in f:
                try:
                    j = json.loads(line)
                    out[str(j["id"])] = j.get("type", "")
                except (ValueError, KeyError):
                    pass
    return out


def notifier_received(stderr_text):
    """N of the run's closing line "notify: N alerts (…)"."""
    import re
    m = re.findall(r"notify: (\d+) alerts \(", stderr_text)
    return int(m[-1]) if m else None


def count_lines(path):
    if not os.path.exists(path):
        return 0
    with open(path, "rb") as f:
        return sum(1 for line in f if line.strip())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build/release")
    ap.add_argument("--model", default="models/default.onnx")
    ap.add_argument("--symbols", type=int, default=100)
    ap.add_argument("--speed", type=float, default=2.0)
    ap.add_argument("--seconds", type=int, default=3600)
    ap.add_argument("--sample-s", type=float, default=60)
    ap.add_argument("--poll-s", type=float, default=5)
    ap.add_argument("--port", type=int, default=0, help="dashboard port (0: a free one)")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
    ap.add_argument("--tag", default="")
    ap.add_argument("--note", default="", help="free text for the result (e.g. the machine was loaded)")
    ap.add_argument("--command", default="")
    a = ap.parse_args()
    build = a.build if os.path.isabs(a.build) else os.path.join(ROOT, a.build)
    model = a.model if os.path.isabs(a.model) else os.path.join(ROOT, a.model)
    binary = os.path.join(build, "src", "app", "ticksentry")
    if not os.access(binary, os.X_OK):
        sys.exit("soak: %s not built (cmake --build %s --target ticksentry)" % (binary, build))

    # The commit the binary was built from (taken now: the tree may change during an hour's run).
    commit = sh("git rev-parse --short HEAD") or "unknown"
    if sh("git status --porcelain --untracked-files=no -- src | head -1"):
        commit += "-dirty"
    tmp = tempfile.mkdtemp(prefix="soak-")
    hook = Webhook()
    threading.Thread(target=hook.serve_forever, daemon=True).start()
    port = a.port
    if port == 0:
        import socket
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
    token = "soak"
    cfg = os.path.join(tmp, "soak.toml")
    with open(cfg, "w") as f:
        f.write("""[sim]
events_per_s = {eps}

[model]
backend = "cpu"

[notify]
outbox_db = "{tmp}/outbox.db"
drain_ms = 60000

[[notify.receivers]]
name = "soak"
type = "webhook"
url = "http://127.0.0.1:{hook}/hook"
rate_per_s = 1000
burst = 1000

[notify.route]
receiver = "soak"
""".format(eps=200 * a.symbols, tmp=tmp, hook=hook.server_address[1]))
    run = [binary, "run", "--config", cfg, "--model", model, "--symbols", str(a.symbols), "--speed", str(a.speed),
           "--duration", str(a.seconds), "--http", "127.0.0.1:%d" % port, "--http-token", token,
           "--out-dir", os.path.join(tmp, "run"), "--summary-json", os.path.join(tmp, "summary.json")]
    print("soak: " + " ".join(run), flush=True)
    stdout_path, stderr_path = os.path.join(tmp, "stdout.txt"), os.path.join(tmp, "stderr.txt")
    started = time.time()
    with open(stdout_path, "wb") as out, open(stderr_path, "wb") as err:
        proc = subprocess.Popen(run, stdout=out, stderr=err, cwd=tmp)
    stop = threading.Event()
    base = "http://127.0.0.1:%d" % port
    # The dashboard starts once the pipeline is built (the model takes seconds): wait for it.
    for _ in range(600):
        if proc.poll() is not None:
            break
        try:
            urllib.request.urlopen(base + "/healthz", timeout=2).read()
            break
        except Exception:  # noqa: BLE001
            time.sleep(0.5)
    poller, stream = Poller(base, token, a.poll_s, stop), Stream(base, token, stop)
    poller.start()
    stream.start()
    rss = []
    run_start = time.monotonic()
    next_sample = run_start
    while proc.poll() is None:
        if time.monotonic() >= next_sample:
            kb = rss_kb(proc.pid)
            if kb is not None:
                rss.append({"t_s": round(time.time() - started, 1), "rss_mb": round(kb / 1024.0, 1)})
                print("soak: t=%6.0f s  rss %.1f MB  webhook alerts %d  stream alerts %d  poll errors %d" % (
                    rss[-1]["t_s"], rss[-1]["rss_mb"], len(hook.firing), stream.alert_messages,
                    sum(poller.errors.values())), flush=True)
            next_sample += a.sample_s
        time.sleep(1)
    rc = proc.returncode
    # The dashboard closes while the run shuts down (--duration reached): failures from then on
    # are the end of the run, not errors.
    shutdown_at = min(time.monotonic(), run_start + a.seconds)
    time.sleep(1)
    stop.set()
    hook.shutdown()

    summary = {}
    try:
        with open(os.path.join(tmp, "summary.json")) as f:
            summary = json.load(f)
    except (OSError, ValueError) as e:
        summary = {"error": str(e)}
    run_dir = os.path.join(tmp, "run")
    jsonl = [os.path.join(run_dir, n) for n in os.listdir(run_dir) if n.endswith(".jsonl")] if os.path.isdir(run_dir) else []
    dbs = [os.path.join(run_dir, n) for n in os.listdir(run_dir) if n.endswith(".db")] if os.path.isdir(run_dir) else []
    audit_rows = None
    for db in dbs:
        try:
            con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
            audit_rows = (audit_rows or 0) + con.execute("SELECT COUNT(*) FROM alerts").fetchone()[0]
            con.close()
        except sqlite3.Error:
            pass
    pipeline_alerts = summary.get("alerts_total")
    with open(stderr_path, "rb") as f:
        stderr_text = f.read().decode("utf-8", "replace")
    by_id = jsonl_types(jsonl)
    event_ids = {i for i, t in by_id.items() if t not in ENDING_TYPES}
    ending_ids = {i for i, t in by_id.items() if t in ENDING_TYPES}
    webhook_ids = set(hook.firing)
    missing_events = sorted(event_ids - webhook_ids)
    metrics_alerts = metric_sum(poller.last_metrics, "ticksentry_alerts_total") if poller.last_metrics else None
    sinks = {
        "stdout_lines": count_lines(stdout_path),
        "jsonl_lines": sum(count_lines(p) for p in jsonl),
        "audit_rows": audit_rows,
        "notifier_received": notifier_received(stderr_text),
        "webhook_alert_ids_firing": len(hook.firing),
        "webhook_event_alerts": len(event_ids & webhook_ids),
        "webhook_event_alerts_missing": len(missing_events),
        "webhook_event_alerts_missing_first": missing_events[:10],
        "webhook_sealed_alerts": len(ending_ids & webhook_ids),
        "sealed_alerts_ended_before_announced": len(ending_ids - webhook_ids),
        "webhook_ids_not_in_jsonl": len(webhook_ids - set(by_id)),
        "webhook_repeats": sum(n - 1 for n in hook.firing.values()),
        "webhook_posts": hook.posts,
        "webhook_bad_bodies": hook.bad,
        "webhook_resolved": len(hook.resolved),
        "stream_alert_messages": stream.alert_messages,
        "stream_alert_ids": len(stream.alert_ids),
    }
    poll_errors = sum(1 for t in poller.error_times if t < shutdown_at - 1.0)
    first, last = (rss[0]["rss_mb"], rss[-1]["rss_mb"]) if rss else (None, None)
    # Flat memory: after the first 10 minutes (windows, baselines, rings and the model warm
    # up) the RSS grows by less than 10 %.
    settled = [r for r in rss if r["t_s"] >= 600]
    growth = (settled[-1]["rss_mb"] / settled[0]["rss_mb"] - 1.0) if len(settled) >= 2 else None
    checks = {
        "exit_code_0": rc == 0,
        "no_input_errors": not summary.get("errors"),
        "no_model_failures": (summary.get("model") or {}).get("failures", 0) == 0,
        "no_poll_errors": poll_errors == 0,
        "stdout_equals_pipeline": sinks["stdout_lines"] == pipeline_alerts,
        "jsonl_equals_pipeline": sinks["jsonl_lines"] == pipeline_alerts,
        "audit_equals_pipeline": sinks["audit_rows"] == pipeline_alerts,
        "notifier_equals_pipeline": sinks["notifier_received"] == pipeline_alerts,
        "webhook_every_event_alert": not missing_events and len(event_ids) + len(ending_ids) == pipeline_alerts,
        "webhook_nothing_unknown": sinks["webhook_ids_not_in_jsonl"] == 0,
        "stream_equals_pipeline": sinks["stream_alert_ids"] == pipeline_alerts,
    }
    if a.seconds >= 1200:  # a shorter run has no settled stretch to judge
        checks["rss_growth_after_10min_below_10pct"] = growth is not None and growth < 0.10
    cpu = sh("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'")
    machine = os.environ.get("TICKSENTRY_MACHINE", "cpu2")
    err_tail = stderr_text[-3000:]
    doc = {
        "benchmark": "soak",
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "commit": commit,
        "machine": {"name": machine, "cpu": cpu, "cores": os.cpu_count(), "kernel": platform.release(),
                    "load_avg_at_end": list(os.getloadavg())},
        "command": a.command or " ".join(sys.argv),
        "run_command": " ".join(run).replace(tmp, "<tmp>").replace(ROOT + "/", ""),
        "settings": {"symbols": a.symbols, "speed": a.speed, "events_per_s_config": 200 * a.symbols,
                     "seconds": a.seconds, "rss_sample_s": a.sample_s, "poll_s": a.poll_s,
                     "model": os.path.relpath(model, ROOT), "model_backend": "cpu",
                     "nominal": "the simulator's default per-symbol flow (200 events/s per symbol before the "
                                "intraday U-shape) in real time; speed 2 = twice that"},
        "note": a.note,
        "wall_s": round(time.time() - started, 1),
        "exit_code": rc,
        "results": {
            "pipeline_alerts": pipeline_alerts,
            "metrics_alerts_total_last_poll": metrics_alerts,
            "sinks": sinks,
            "events": summary.get("events"),
            "events_per_s": summary.get("events_per_s"),
            "input_errors": summary.get("errors"),
            "alerts_by_type": summary.get("alerts"),
            "model": {k: (summary.get("model") or {}).get(k) for k in
                      ("requests", "results", "failures", "drops", "fallback_results", "backend")},
            "notify": summary.get("notify"),
            "event_latency_us": summary.get("event_latency_us"),
            "rss_mb": {"first": first, "last": last, "max": max((r["rss_mb"] for r in rss), default=None),
                       "growth_after_10min": growth, "samples": rss},
            "poller": {"ok": poller.ok, "errors_during_run": poll_errors,
                       "failures_at_shutdown": sum(poller.errors.values()) - poll_errors, "errors_by_path": poller.errors, "first_errors": poller.first_errors,
                       "p50_ms": {p: percentile(v, 50) for p, v in poller.latency_ms.items()},
                       "p99_ms": {p: percentile(v, 99) for p, v in poller.latency_ms.items()}},
            "stream": {"connects": stream.connects, "errors": stream.errors},
        },
        "checks": checks,
        "passed": all(checks.values()),
        "stderr_tail": err_tail,
    }
    os.makedirs(a.out, exist_ok=True)
    dest = os.path.join(a.out, "soak-%s-%s%s.json" % (machine, datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%d"),
                                                       "-" + a.tag if a.tag else ""))
    with open(dest, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print("soak: wrote %s (passed: %s)" % (dest, doc["passed"]))
    for k, v in checks.items():
        if not v:
            print("soak: check failed: " + k)
    return 0 if doc["passed"] else 1


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    sys.exit(main())
