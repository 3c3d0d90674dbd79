#!/usr/bin/env python3
"""Regenerates the benchmark tables of docs/performance.md from bench/results/*.json.

Usage: bench/report.py [--write]   (prints the Markdown; --write replaces the block between
<!-- bench:begin --> and <!-- bench:end --> in docs/performance.md)
"""
import glob
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def latest(benchmark):
    """The newest results file per machine for a benchmark."""
    by_machine = {}
    for path in sorted(glob.glob(os.path.join(ROOT, "bench", "results", f"{benchmark}-*.json"))):
        with open(path) as f:
            doc = json.load(f)
        by_machine[doc["machine"]["name"]] = (path, doc)
    return by_machine


def pipeline_tables():
    out = []
    for machine, (path, doc) in sorted(latest("pipeline").items()):
        out.append(f"Pipeline, `{machine}` ({doc['machine'].get('cpu', '')}, {doc['machine'].get('cores')} cores), "
                   f"commit `{doc['commit']}`, {doc['date']} — `{os.path.relpath(path, ROOT)}`\n")
        out.append("| benchmark | case | result | target |")
        out.append("|---|---|---|---|")
        for r in doc["results"]:
            c, m = r["case"], r["metrics"]
            if c["bench"] == "throughput":
                out.append(f"| throughput, one core | sim, {c['symbols']} symbols, {c['runs']} runs × {c['events_per_run']:,} events "
                           f"| median **{m['median_events_per_s']/1e6:.2f} M events/s** (slowest run {m['p99_low_events_per_s']/1e6:.2f} M) "
                           f"| ≥ 3.00 M events/s |")
            elif c["bench"] == "latency":
                runs = c.get("runs", 1)
                out.append(f"| latency, paced | sim, {c['symbols']} symbols, {c['paced_events_per_s']:,.0f} events/s, {runs} runs × {c['seconds']} s "
                           f"| receive→alert ({m['alerts']} alerts, all runs): p50 {m['alert_p50_us']:.1f} µs, **p99 {m['alert_p99_us']:.1f} µs, "
                           f"p999 {m['alert_p999_us']:.1f} µs**; p99 of the median run {m.get('alert_p99_us_median_run', m['alert_p99_us']):.1f} µs. "
                           f"receive→rules, every event: p50 {m['event_p50_us']:.1f} µs, p99 {m['event_p99_us']:.1f} µs, "
                           f"p999 {m['event_p999_us']:.1f} µs | p99 ≤ 100 µs, p999 ≤ 1 ms |")
            elif c["bench"] == "replay":
                out.append(f"| replay, as fast as possible | {c['data']} ({m['events']:,} events, {c['runs']} runs) "
                           f"| median **{m['median_events_per_s']/1e6:.2f} M events/s** | — |")
        out.append("")
    return "\n".join(out)


def engine_tables():
    out = []
    for machine, (path, doc) in sorted(latest("engine-cpu").items()):
        out.append(f"Inference engine, CPU, `{machine}` ({doc['machine'].get('cpu', '')}), commit `{doc['commit']}`, "
                   f"{doc['date']} — `{os.path.relpath(path, ROOT)}`. p50 µs; ratio = peer p50 / ticksentry p50 "
                   f"(> 1: ticksentry faster).\n")
        out.append("| model | batch | threads | ticksentry | onnxruntime-cpu | pytorch-eager | vs ORT | vs PyTorch |")
        out.append("|---|---|---|---|---|---|---|---|")
        rows = {}
        for r in doc["results"]:
            c = r["case"]
            key = (c["model"], c["batch"], c.get("threads"))
            rows.setdefault(key, {})[r["system"]] = r["metrics"]["p50_us"]
        for (model, batch, threads), by in sorted(rows.items(), key=lambda kv: (kv[0][0], kv[0][1], str(kv[0][2]))):
            ts_ = by.get("ticksentry")
            cell = lambda v: f"{v:,.1f}" if v is not None else "–"
            ratio = lambda peer: f"{by[peer] / ts_:.2f}×" if ts_ and peer in by else "–"
            out.append(f"| {model} | {batch} | {threads} | {cell(ts_)} | {cell(by.get('onnxruntime-cpu'))} | "
                       f"{cell(by.get('pytorch-eager'))} | {ratio('onnxruntime-cpu')} | {ratio('pytorch-eager')} |")
        out.append("")
    return "\n".join(out)


def cuda_runs():
    """engine-cuda runs to show: the newest, and the newest that covers the standard batch sizes
    (1, 16, 256, 1024, 4096) if the newest is a partial rerun (e.g. batch 1/16 only)."""
    docs = []
    for path in glob.glob(os.path.join(ROOT, "bench", "results", "engine-cuda-*.json")):
        with open(path) as f:
            doc = json.load(f)
        if isinstance(doc, dict) and "date" in doc:  # raw ticksentry-only arrays have no run header
            docs.append((path, doc))
    docs.sort(key=lambda pd: pd[1]["date"])
    batches = lambda d: {r["case"]["batch"] for r in d["results"]}
    shown = docs[-1:]
    standard = {1, 16, 256, 1024, 4096}  # the engine benchmark's standard batch sizes
    if docs:
        full = [pd for pd in docs if standard <= batches(pd[1])]
        if full and full[-1] is not docs[-1]:
            shown = [full[-1], docs[-1]]
    return shown


def cuda_tables():
    out = []
    for path, doc in cuda_runs():
        machine = doc["machine"]["name"]
        m = doc["machine"]
        out.append(f"Inference engine, CUDA, `{machine}` ({m.get('gpu', '')}{', torch ' + m['torch'] if m.get('torch') else ', no PyTorch peers'}), commit "
                   f"`{doc['commit']}`, {doc['date']} — `{os.path.relpath(path, ROOT)}`. Host-to-host p50 µs "
                   f"(pinned host input → probabilities in host memory); ratio = best PyTorch p50 / ticksentry p50 "
                   f"(> 1: ticksentry faster); INT8 rows show PyTorch's FP16 figures (PyTorch has no INT8 path).\n")
        has_dev = any("device_p50_us" in r.get("metrics", {}) for r in doc["results"] if r["system"] == "ticksentry")
        if has_dev:
            out.append("Device-resident p50 µs (input and output in device memory, no PCIe: ticksentry's "
                       "enqueue_on_stream vs PyTorch's CUDA-graph replay, both timed with CUDA events) and its ratio "
                       "in the last column.\n")
        out.append("| model | precision | batch | ticksentry p50 / p99 | pytorch eager | pytorch CUDA graphs | torch.compile "
                   "| ticksentry seq/s | vs best PyTorch | device MiB: ticksentry / PyTorch CUDA graphs |"
                   + (" device-resident: ticksentry / PyTorch graph (ratio) |" if has_dev else ""))
        out.append("|---|---|---|---|---|---|---|---|---|---|" + ("---|" if has_dev else ""))
        rows = {}
        for r in doc["results"]:
            c = r["case"]
            if "metrics" not in r:  # a peer that failed or was skipped (its "error" says why)
                continue
            rows.setdefault((c["model"], c["precision"], c["batch"]), {})[r["system"]] = r["metrics"]
        cell = lambda d: f"{d['p50_us']:,.0f}" if d else "–"
        for (model, prec, batch), by in sorted(rows.items()):
            ts_ = by.get("ticksentry")
            if prec == "int8":  # PyTorch has no INT8: ticksentry's INT8 is shown against PyTorch's FP16
                by = {**rows.get((model, "fp16", batch), {}), "ticksentry": ts_}
            peers = [by[k]["p50_us"] for k in ("pytorch-eager", "pytorch-cudagraph", "torch-compile") if k in by]
            ratio = f"{min(peers) / ts_['p50_us']:.2f}×" if ts_ and peers else "–"
            tput = f"{ts_['throughput_per_s'] / 1e6:.3f} M" if ts_ and "throughput_per_s" in ts_ else "–"
            p99 = f" / {ts_['p99_us']:,.0f}" if ts_ and "p99_us" in ts_ else ""
            mib = lambda d: f"{d['device_memory_bytes'] / 2**20:,.0f}" if d and "device_memory_bytes" in d else "–"
            mem = f"{mib(ts_)} / {mib(by.get('pytorch-cudagraph'))}"
            dev = ""
            if has_dev:
                g = by.get("pytorch-cudagraph") or {}
                if ts_ and "device_p50_us" in ts_ and "device_p50_us" in g:
                    dev = (f" {ts_['device_p50_us']:,.1f} / {g['device_p50_us']:,.1f} "
                           f"({g['device_p50_us'] / ts_['device_p50_us']:.2f}×) |")
                else:
                    dev = " – |"
            out.append(f"| {model} | {prec} | {batch} | {cell(ts_)}{p99} | {cell(by.get('pytorch-eager'))} | "
                       f"{cell(by.get('pytorch-cudagraph'))} | {cell(by.get('torch-compile'))} | {tput} | {ratio} | {mem} |"
                       + dev)
        out.append("")
    return "\n".join(out)


def shape_sweep_tables():
    """The shape sweep (bench/shape_sweep): per architecture, ticksentry FP16 against the best
    PyTorch FP16 (eager or CUDA graphs) at each batch, host-to-host and device-resident, with the
    accuracy against PyTorch FP32; the newest file per machine."""
    out = []
    for machine, (path, doc) in sorted(latest("shape-sweep").items()):
        # A sweep of some architectures only (SWEEP_ONLY) replaces their rows; the others keep the
        # rows of the newest earlier file that has them (named below the table).
        older = {}
        for p in sorted(glob.glob(os.path.join(ROOT, "bench", "results", "shape-sweep-*.json"))):
            with open(p) as f:
                d = json.load(f)
            if d["machine"]["name"] == machine and p != path:
                for r in d["rows"]:
                    older.setdefault(r["arch"], {})[r["batch"]] = (p, r)
        mine = {r["arch"] for r in doc["rows"]}
        kept = {a: rows for a, rows in older.items() if a not in mine}
        doc = dict(doc, rows=doc["rows"] + [r for rows in kept.values() for _, r in rows.values()])
        s = doc["summary"]
        out.append(f"Shape sweep, `{machine}` ({doc['machine'].get('gpu', '')}, PyTorch {doc['machine'].get('torch')}), "
                   f"commit `{doc['commit']}`, {doc['date']} — `{os.path.relpath(path, ROOT)}`. "
                   f"{s['architectures']} architectures (seed {doc['export'].get('seed')}, exported by torch "
                   f"{doc['export'].get('torch')}), T = 60. Cells: ticksentry FP16 P50 µs host-to-host (pinned) "
                   f"/ ratio = best PyTorch FP16 P50 (eager, CUDA graphs) ÷ ticksentry; in brackets the device-resident "
                   f"ratio (CUDA-graph replay ÷ enqueue_on_stream). Target ≥ 2× at batch 1, ≥ 1× at every batch "
                   f"(✗ = missed). Accuracy: relative L2 vs PyTorch FP32 (FP16 ≤ 1e-2, FP32 ≤ 1e-5). "
                   f"{s['architectures_meeting_every_target']} of {s['architectures']} architectures meet every "
                   f"target; {s['cases_meeting_target']} of {s['judged_cases']} (architecture, batch) cases."
                   + (f" Memory (ticksentry FP16 context + weights ÷ PyTorch eager's own peak for the case; target ≤ 1): "
                      f"{s['memory_cases_within_pytorch']} of {s['memory_judged_cases']} "
                      f"cases within." if "memory_judged_cases" in s else "") + "\n")
        batches = sorted({r["batch"] for r in doc["rows"]})
        has_mem = any("memory_ratio" in r for r in doc["rows"])
        mem_head = " memory MiB ts / PyTorch (b1, b4096) |" if has_mem else ""
        out.append("| architecture | " + " | ".join(f"b{b}" for b in batches) + " | FP16 err | FP32 err |" + mem_head
                   + " FP16 tactics (b1) |")
        out.append("|---|" + "---|" * len(batches) + "---|---|" + ("---|" if has_mem else "") + "---|")
        by = {}
        for r in doc["rows"]:
            by.setdefault(r["arch"], {})[r["batch"]] = r
        for arch, rows in sorted(by.items()):
            cells = []
            for b in batches:
                r = rows.get(b, {})
                if "ratio_h2h" not in r:
                    cells.append("–")
                    continue
                dev = f" ({r['ratio_dev']:.2f}×)" if "ratio_dev" in r else ""
                mark = "" if r["meets_target"] else " ✗"
                cells.append(f"{r['ts_fp16_p50_us']:,.0f} / {r['ratio_h2h']:.2f}×{dev}{mark}")
            any_row = next(iter(rows.values()))
            acc = any_row.get("accuracy", {})
            fmt = lambda v: f"{v:.1e}" if isinstance(v, (int, float)) else "–"
            tactics = rows.get(batches[0], {}).get("ts_fp16_tactics", "")
            tactics = ", ".join(sorted({t.split(":", 1)[0] + ":" + t.split(":", 1)[1] for t in tactics.split(";")
                                        if ":" in t and t.split(":", 1)[1] != "default"}))[:120]
            mem = ""
            if has_mem:
                def mcell(r):
                    torch_mem = [r[k] for k in ("torch_eager_case_memory_bytes",) if r.get(k)]
                    if "memory_ratio" not in r or not torch_mem:
                        return "–"
                    return (f"{r['ts_fp16_memory_bytes'] / 2**20:,.1f} / {min(torch_mem) / 2**20:,.1f}"
                            + ("" if r["memory_ok"] else " ✗"))
                mem = " " + ", ".join(mcell(rows.get(b, {})) for b in (batches[0], batches[-1])) + " |"
            out.append(f"| {arch} | " + " | ".join(cells) + f" | {fmt(acc.get('fp16'))} | {fmt(acc.get('fp32'))} |" + mem
                       + f" {tactics} |")
        if s.get("failures"):
            out.append("\nFailures: " + "; ".join(s["failures"][:40]) + ".")
        if kept:
            files = sorted({os.path.relpath(p, ROOT) for rows in kept.values() for p, _ in rows.values()})
            out.append(f"\nRe-measured in this file: {len(mine)} architectures ({s['architectures_meeting_every_target']} "
                       f"of them meet every target); the other {len(kept)} rows are from " + ", ".join(f"`{f}`" for f in files)
                       + " (their counts and failures there).")
        out.append("")
    return "\n".join(out)


def alert_rate_tables():
    """Alerts per symbol-hour on real data at the default configuration (bench/alert_rates.sh):
    the newest file per machine, and the one before it as "before"; calibration datasets marked."""
    out = []
    by_machine = {}
    for path in sorted(glob.glob(os.path.join(ROOT, "bench", "results", "alert-rates-*.json"))):
        with open(path) as f:
            doc = json.load(f)
        by_machine.setdefault(doc["machine"]["name"], []).append((doc["date"], path, doc))
    for machine, runs in sorted(by_machine.items()):
        runs.sort(key=lambda r: r[0])
        _, path, doc = runs[-1]
        prev = runs[-2] if len(runs) > 1 else None
        before = {r["name"]: r for r in prev[2]["results"]} if prev else {}
        out.append(f"Alert rates on real data, default configuration, `{machine}`, commit `{doc['commit']}`, "
                   f"{doc['date']} — `{os.path.relpath(path, ROOT)}`"
                   + (f"; before: commit `{prev[2]['commit']}` — `{os.path.relpath(prev[1], ROOT)}`" if before else "")
                   + f". Target ≤ {doc['target_per_symbol_hour']} alert per symbol-hour"
                   + (f"; calibration set: {doc['calibration_set']}" if doc.get("calibration_set") else "") + ".\n")
        out.append("| dataset | symbol-hours | alerts / symbol-hour | before | by type (per symbol-hour) | real events |")
        out.append("|---|---|---|---|---|---|")
        for r in doc["results"]:
            if "skipped" in r:
                out.append(f"| {r['name']} | — | skipped: {r['skipped']} | | | |")
                continue
            b = before.get(r["name"])
            name = r["name"] + (" (calibration)" if r.get("role") == "calibration" else "")
            types = ", ".join(f"{k} {v:.2f}" for k, v in r["per_symbol_hour_by_type"].items()) or "none"
            events = "; ".join(f"{e['what']}: " + (f"alerted ({', '.join(e['alerts'])})" if e["alerted"] else "**missed**")
                               for e in r["real_events"]) or "—"
            out.append(f"| {name} | {r['symbol_hours']:g} | **{r['per_symbol_hour']:.2f}** "
                       f"{'✓' if r['target_met'] else '✗'} | {b['per_symbol_hour']:.2f} |" if b else
                       f"| {name} | {r['symbol_hours']:g} | **{r['per_symbol_hour']:.2f}** "
                       f"{'✓' if r['target_met'] else '✗'} | — |")
            out[-1] += f" {types} | {events} |"
        if doc.get("not_readable_yet"):
            out.append("\nNot in this table: " + "; ".join(doc["not_readable_yet"]) + ".")
        out.append("")
    return "\n".join(out)


def main():
    text = pipeline_tables() + "\n" + engine_tables() + "\n" + cuda_tables() + "\n" + shape_sweep_tables() + "\n" + alert_rate_tables()
    if "--write" in sys.argv:
        doc = os.path.join(ROOT, "docs", "performance.md")
        with open(doc) as f:
            s = f.read()
        begin, end = "<!-- bench:begin -->", "<!-- bench:end -->"
        if begin not in s:
            s += f"\n{begin}\n{end}\n"
        head, rest = s.split(begin, 1)
        _, tail = rest.split(end, 1)
        with open(doc, "w") as f:
            f.write(f"{head}{begin}\n{text}\n{end}{tail}")
    print(text)


if __name__ == "__main__":
    main()
