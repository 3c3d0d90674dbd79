#!/usr/bin/env python3
"""PyTorch on the GPU, the peer of bench/engine_cuda_bench (run by bench/engine_cuda_bench.sh
on the device machine, with its python3 and PyTorch 2.x).

    python3 bench/peers/torch_cuda_bench.py --models DIR --out FILE
        [--only gru-2x128,lstm-2x128] [--precisions fp32,fp16] [--batches 1,16,256,1024,4096]
        [--seq 60] [--min-time-s 1.0] [--compile-batches 1,1024] [--compile-precisions fp16]
        [--compile-models gru-2x128,lstm-2x128,transformer-2x64] [--compile-mode max-autotune]
        [--compile-timeout-s 90] [--compile-budget-s 240] [--compile-fallback-mode reduce-overhead]
        [--compile-allow-rnn 1]

DIR is what bench/peers/export_models.py wrote: <model>/weights.pt, the state_dict of the very
module exported to <model>/model.onnx, so both systems run the same weights. Systems, all
host-to-host like ticksentry (input float32 in pinned host memory → probabilities float32 in
host memory, one synchronous call per measurement):
  pytorch-eager      x.to(cuda, non_blocking) → model → .cpu()
  pytorch-cudagraph  copy into the captured static input, graph.replay(), .cpu()
                     (also device_p50_us: replay alone, device-resident, no copies)
  torch-compile      torch.compile(mode=--compile-mode, dynamic=False) (only --compile-models at
                     --compile-batches and --compile-precisions: each shape compiles anew). One
                     compile (first 3 calls) is capped at --compile-timeout-s (SIGALRM); past it
                     the case records the time it gave up at and tries --compile-fallback-mode
                     ("" = none) under the same cap; all compiles together stop at
                     --compile-budget-s (later cases record "skipped: compile budget"). Each
                     result records the mode that ran, compile_s, dynamo's graph count and graph
                     breaks, and the CUDA kernels one call launches (profiler; e.g. whether
                     nn.GRU stays on cuDNN or becomes Triton kernels). With dynamo's default
                     allow_rnn=False, nn.GRU/LSTM are not traced at all (0 graphs: the "compiled"
                     model runs eager, H200 run of 2026-11-30 19:33); --compile-allow-rnn 1 (the
                     default here) traces them. Timed after the manual CUDA graph is freed.
FP16 runs model.half() on x.half(). device_memory_bytes = torch.cuda.max_memory_allocated
over the case's timed calls (peak of live tensors: the model's weights in this precision, the
CUDA graph's static input/output and whatever its private pool holds live, the call's
activations, cuDNN's RNN workspace; not the caching allocator's free blocks, not the CUDA
context). Before each case everything earlier cases left is released (gc.collect(),
torch.cuda.empty_cache()), so no case counts another's tensors: until 2026-12-01 a compiled
model of the previous batch stayed referenced and was counted (LSTM-2x128 FP16 b4096: 750 MiB
in a run with torch.compile cases, 270 alone); "memory_at_start_bytes" records what was live
when the peak was reset (the weights, and for eager the captured graph's static tensors).
Percentiles nearest rank, throughput = batch / p50. Writes a JSON array of results.

    python3 bench/peers/torch_cuda_bench.py --merge TICKSENTRY.json TORCH.json [TORCH2.json ...] --results-dir DIR
        [--machine h200] [--commit abc123]
merges the arrays into DIR/engine-cuda-<machine>-<yyyymmdd>.json (BENCHMARKS.md shape, with
"ratios": best PyTorch / ticksentry per case; ticksentry's INT8 against PyTorch's FP16,
"peer_precision") and prints a table.
"""
import argparse
import datetime
import gc
import json
import os
import platform
import shlex
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peer_timing  # noqa: E402
from peer_timing import nearest_rank  # noqa: E402


def time_calls(fn, min_time_s, min_iters=200):
    # warm-up: >= 20 calls and >= 0.2 s
    return peer_timing.time_calls(fn, min_time_s, min_iters, warm_calls=20, warm_s=0.2, max_iters=200000)


def make_model(name):
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "models"))
    import fixtures
    if name == "gru-2x128":
        return fixtures.RecurrentHead("gru", 128, 2, 1, False)
    if name == "lstm-2x128":
        return fixtures.RecurrentHead("lstm", 128, 2, 1, False)
    if name == "transformer-2x64":
        return fixtures.TransformerHead(64, 4, 2, "relu")
    raise SystemExit(f"unknown model {name}")


class CompileTimeout(Exception):
    pass


def kernels_of(fn):
    """Names of the CUDA kernels one call of fn launches (torch.profiler), most frequent first."""
    import collections
    import torch
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    names = collections.Counter()
    for ev in prof.events():
        if ev.device_type == torch.autograd.DeviceType.CUDA:
            names[ev.name[:90]] += 1
    return [f"{n} x{c}" for n, c in names.most_common(12)]


def compile_peer(args, model, pool, dtype, dev, case, results, spent):
    """torch.compile at one shape, capped in time (module docstring). Returns (compiled, info)
    or None after recording why in results."""
    import signal
    import torch

    def fail(mode, why):
        results.append({"system": "torch-compile", "case": case, "mode": mode, "error": why[:400]})
        print(f"torch-compile {case['model']} {case['precision']} {case['batch']} ({mode}): {why}"[:300], file=sys.stderr, flush=True)

    def on_alarm(signum, frame):
        raise CompileTimeout()

    modes = [args.compile_mode] + ([args.compile_fallback_mode] if args.compile_fallback_mode else [])
    for mode in modes:
        left = args.compile_budget_s - spent[0]
        if left <= 5:
            fail(mode, f"skipped: compile budget of {args.compile_budget_s:.0f} s spent")
            return None
        cap = int(min(args.compile_timeout_s, left))
        torch._dynamo.reset()
        # Dynamo leaves nn.GRU/nn.LSTM to eager unless allow_rnn is set (then it traces them and
        # Inductor calls cuDNN's RNN from the compiled graph); the result records which ran.
        torch._dynamo.config.allow_rnn = bool(args.compile_allow_rnn)
        from torch._dynamo.utils import counters
        counters.clear()
        old = signal.signal(signal.SIGALRM, on_alarm)
        signal.alarm(cap)
        t0 = time.perf_counter()
        try:
            cm = torch.compile(model, mode=mode, dynamic=False)
            with torch.inference_mode():
                xx = pool[0].to(dev).to(dtype)
                for _ in range(3):
                    cm(xx)
            torch.cuda.synchronize()
            signal.alarm(0)
            compile_s = time.perf_counter() - t0
            spent[0] += compile_s
        except CompileTimeout:
            spent[0] += time.perf_counter() - t0
            fail(mode, f"compile did not finish within {cap} s (stopped)")
            continue
        except Exception as e:  # noqa: BLE001 — a peer failing is a result, not a crash
            signal.alarm(0)
            spent[0] += time.perf_counter() - t0
            fail(mode, f"{type(e).__name__}: {e}")
            continue
        finally:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, old)
        info = {"compile_s": compile_s, "mode": mode, "allow_rnn": bool(args.compile_allow_rnn),
                "dynamo": {"unique_graphs": int(counters["stats"].get("unique_graphs", 0)),
                           "graph_breaks": int(sum(counters["graph_break"].values()))}}
        try:
            with torch.inference_mode():
                xx = pool[1].to(dev).to(dtype)
                info["kernels"] = kernels_of(lambda: cm(xx))
        except Exception as e:  # noqa: BLE001
            info["kernels"] = [f"profiler failed: {type(e).__name__}: {e}"[:200]]
        print(f"torch-compile {case['model']} {case['precision']} {case['batch']}: {mode} compiled in {compile_s:.1f} s, "
              f"{info['dynamo']}, kernels {info['kernels'][:4]}", flush=True)
        return cm, info
    return None


def bench(args):
    import torch
    torch.backends.cudnn.benchmark = True
    dev = torch.device("cuda")
    results = []
    compile_spent = [0.0]  # seconds spent compiling, all cases
    print(f"{'system':18s} {'model':12s} {'prec':5s} {'batch':>6s} {'p50_us':>10s} {'p99_us':>10s} {'seq_per_s':>14s} {'dev_MiB':>9s}")
    for name in args.only.split(","):
        wpath = os.path.join(args.models, name, "weights.pt")
        if not os.path.exists(wpath):
            print(f"{name}: no weights.pt, skipped", file=sys.stderr)
            continue
        for prec in args.precisions.split(","):
            dtype = torch.float16 if prec == "fp16" else torch.float32
            torch.backends.cuda.matmul.allow_tf32 = prec == "tf32"
            torch.backends.cudnn.allow_tf32 = prec == "tf32"
            base = make_model(name)
            base.load_state_dict(torch.load(wpath, map_location="cpu"))
            model = base.to(dev).to(dtype).eval()
            for b in [int(x) for x in args.batches.split(",")]:
                gc.collect()  # earlier cases' graphs, compiled models and tensors: not this case's memory
                torch.cuda.synchronize()
                torch.cuda.empty_cache()
                g = torch.Generator().manual_seed(b)
                pool = [torch.randn(b, args.seq, 32, generator=g).pin_memory() for _ in range(4)]
                it = [0]

                def next_x():
                    it[0] += 1
                    return pool[it[0] % 4]

                systems = []
                with torch.inference_mode():
                    def eager():
                        x = next_x().to(dev, non_blocking=True).to(dtype)
                        return model(x).float().cpu()
                    systems.append(("pytorch-eager", eager, None))

                # CUDA graph: static input, captured after warm-up on a side stream.
                static_x = torch.zeros(b, args.seq, 32, device=dev, dtype=dtype)
                s = torch.cuda.Stream()
                s.wait_stream(torch.cuda.current_stream())
                with torch.cuda.stream(s), torch.inference_mode():
                    for _ in range(3):
                        model(static_x)
                torch.cuda.current_stream().wait_stream(s)
                graph = torch.cuda.CUDAGraph()
                with torch.inference_mode(), torch.cuda.graph(graph):
                    static_y = model(static_x).float()

                def graphed():
                    static_x.copy_(next_x().to(dev, non_blocking=True))
                    graph.replay()
                    return static_y.cpu()
                systems.append(("pytorch-cudagraph", graphed, graph))

                def measure(systems):
                    for sysname, fn, extra in systems:
                        gc.collect()
                        torch.cuda.synchronize()
                        torch.cuda.empty_cache()
                        torch.cuda.reset_peak_memory_stats()
                        mem0 = torch.cuda.memory_allocated()
                        with torch.inference_mode():
                            us = time_calls(fn, args.min_time_s)
                        mem = torch.cuda.max_memory_allocated()
                        p50, p99 = nearest_rank(us, 0.5), nearest_rank(us, 0.99)
                        metrics = {"p50_us": p50, "p99_us": p99, "min_us": us[0], "throughput_per_s": b / (p50 * 1e-6),
                                   "device_memory_bytes": mem, "memory_at_start_bytes": mem0, "iterations": len(us)}
                        if sysname == "pytorch-cudagraph":
                            # Device-resident: replay alone (no copies), timed with CUDA events.
                            torch.cuda.synchronize()
                            for _ in range(10):
                                extra.replay()
                            ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(50)]
                            for e0, e1 in ev:
                                e0.record()
                                extra.replay()
                                e1.record()
                            torch.cuda.synchronize()
                            dev_us = sorted(e0.elapsed_time(e1) * 1000 for e0, e1 in ev)
                            metrics["device_p50_us"] = nearest_rank(dev_us, 0.5)
                        extra_fields = {}
                        if sysname == "torch-compile":
                            metrics["compile_s"] = extra.pop("compile_s")
                            extra_fields = extra
                        results.append({"system": sysname, "case": {"model": name, "precision": prec, "batch": b, "seq": args.seq},
                                        "metrics": metrics, "command": " ".join(shlex.quote(a) for a in sys.argv),
                                        **extra_fields})
                        print(f"{sysname:18s} {name:12s} {prec:5s} {b:6d} {p50:10.1f} {p99:10.1f} {b / (p50 * 1e-6):14.0f} {mem / 2**20:9.1f}",
                              flush=True)

                measure(systems)
                # torch.compile after the manual graph is gone: with the captured graph still alive
                # (its private pool), timing max-autotune's CUDA-graph trees next to it ended in
                # "unspecified launch failure" on the graph's replay (transformer fp16 b4096, H200).
                systems.clear()
                del graph, static_x, static_y, graphed
                torch.cuda.synchronize()
                torch.cuda.empty_cache()
                compile_ok = (prec in args.compile_precisions.split(",") and name in args.compile_models.split(",") and
                              str(b) in args.compile_batches.split(","))
                if compile_ok:
                    case = {"model": name, "precision": prec, "batch": b, "seq": args.seq}
                    got = compile_peer(args, model, pool, dtype, dev, case, results, compile_spent)
                    if got:
                        cm, info = got

                        def compiled(cm=cm):
                            x = next_x().to(dev, non_blocking=True).to(dtype)
                            return cm(x).float().cpu()
                        measure([("torch-compile", compiled, info)])
                        del cm, compiled
                    del got  # holds the compiled model (and its CUDA-graph pool) until released
                    torch._dynamo.reset()
                    torch.cuda.synchronize()
                    torch.cuda.empty_cache()
                with open(args.out, "w") as f:  # after every case: a stopped run keeps what it measured
                    json.dump(results, f, indent=2)
    with open(args.out, "w") as f:
        json.dump(results, f, indent=2)
    print(f"wrote {args.out}")


def machine_info(name):
    def sh(cmd):
        try:
            return subprocess.run(cmd, shell=True, capture_output=True, text=True, timeout=20).stdout.strip()
        except Exception:  # noqa: BLE001
            return ""
    cpu = sh("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'")
    gpu = sh("nvidia-smi --query-gpu=name --format=csv,noheader | head -1")
    driver = sh("nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1")
    info = {"name": name, "cpu": cpu, "cores": os.cpu_count(), "gpu": gpu, "driver": driver,
            "kernel": platform.release()}
    try:
        import torch
        info["torch"] = torch.__version__
        info["cuda"] = torch.version.cuda
    except Exception:  # noqa: BLE001
        pass
    return info


def merge(args):
    results = []
    for path in args.merge:
        with open(path) as f:
            results += json.load(f)
    ratios = []
    by_case = {}
    for r in results:
        if "metrics" not in r:
            continue
        c = r["case"]
        key = (c["model"], c["precision"], c.get("batch"), c["seq"])
        by_case.setdefault(key, {})[r["system"]] = r["metrics"]
    for key, systems in sorted(by_case.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2] or 0)):
        ts = systems.get("ticksentry")
        peer_precision = key[1]
        if key[1] == "int8":  # PyTorch has no INT8 peer: its FP16 is the figure to beat
            peer_precision = "fp16"
            systems = by_case.get((key[0], "fp16", key[2], key[3]), {})
        peers = {k: v for k, v in systems.items() if k != "ticksentry"}
        if not ts or not peers:
            continue
        best = min(peers.items(), key=lambda kv: kv[1]["p50_us"])
        ratios.append({"case": {"model": key[0], "precision": key[1], "batch": key[2], "seq": key[3]},
                       "best_peer": best[0], "peer_precision": peer_precision,
                       "p50_speedup_vs_best_peer": best[1]["p50_us"] / ts["p50_us"],
                       "throughput_ratio_vs_best_peer": ts["throughput_per_s"] / best[1]["throughput_per_s"],
                       "memory_ratio_vs_best_peer": ts["device_memory_bytes"] / max(1, best[1].get("device_memory_bytes", 1))})
    now = datetime.datetime.now(datetime.timezone.utc)
    doc = {"benchmark": "engine-cuda", "date": now.strftime("%Y-%m-%dT%H:%M:%SZ"), "commit": args.commit,
           "machine": machine_info(args.machine),
           "command": args.command or " ".join(shlex.quote(a) for a in sys.argv),
           "settings": json.loads(args.settings) if args.settings else {},
           "results": results, "ratios": ratios}
    os.makedirs(args.results_dir, exist_ok=True)
    path = os.path.join(args.results_dir, f"engine-cuda-{args.machine}-{now.strftime('%Y%m%d')}.json")
    with open(path, "w") as f:
        json.dump(doc, f, indent=2)
    print(f"{'model':12s} {'prec':5s} {'batch':>6s} {'ts_p50':>9s} {'best peer':>18s} {'peer_p50':>9s} {'speedup':>8s} {'mem x':>6s}")
    for r in ratios:
        c = r["case"]
        ts = by_case[(c["model"], c["precision"], c["batch"], c["seq"])]["ticksentry"]
        pb = by_case[(c["model"], r["peer_precision"], c["batch"], c["seq"])][r["best_peer"]]
        print(f"{c['model']:12s} {c['precision']:5s} {c['batch']:6d} {ts['p50_us']:9.1f} {r['best_peer']:>18s} {pb['p50_us']:9.1f} "
              f"{r['p50_speedup_vs_best_peer']:8.2f} {r['memory_ratio_vs_best_peer']:6.2f}")
    print(f"wrote {path}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models")
    ap.add_argument("--out")
    ap.add_argument("--only", default="gru-2x128,lstm-2x128")
    ap.add_argument("--precisions", default="fp32,fp16")
    ap.add_argument("--batches", default="1,16,256,1024,4096")
    ap.add_argument("--seq", type=int, default=60)
    ap.add_argument("--min-time-s", type=float, default=1.0)
    ap.add_argument("--compile-batches", default="1,1024")
    ap.add_argument("--compile-precisions", default="fp16")
    ap.add_argument("--compile-models", default="gru-2x128,lstm-2x128,transformer-2x64")
    ap.add_argument("--compile-mode", default="max-autotune")
    ap.add_argument("--compile-fallback-mode", default="reduce-overhead")
    ap.add_argument("--compile-timeout-s", type=float, default=90.0)
    ap.add_argument("--compile-budget-s", type=float, default=240.0)
    ap.add_argument("--compile-allow-rnn", type=int, default=1,
                    help="torch._dynamo.config.allow_rnn (1: trace nn.GRU/LSTM; 0: dynamo leaves them to eager)")
    ap.add_argument("--merge", nargs="+")
    ap.add_argument("--results-dir", default="bench/results")
    ap.add_argument("--machine", default="h200")
    ap.add_argument("--commit", default="unknown")
    ap.add_argument("--command", default="", help="the driver's command line, recorded in the merged file")
    ap.add_argument("--settings", default="", help="the driver's settings (a JSON object), recorded likewise")
    args = ap.parse_args()
    if args.merge:
        merge(args)
    else:
        if not args.models or not args.out:
            ap.error("--models and --out are required")
        bench(args)


if __name__ == "__main__":
    main()
