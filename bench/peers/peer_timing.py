"""Host-side timing shared by the PyTorch peers (torch_cuda_bench.py, shape_sweep/torch_peer.py):
warm up, then time calls until both a minimum count and a minimum time are reached; microseconds,
sorted; percentiles by nearest rank (the rule the C++ benchmarks use)."""
import math
import time


def nearest_rank(sorted_vals, p):
    k = max(0, min(len(sorted_vals) - 1, int(math.ceil(p * len(sorted_vals))) - 1))
    return sorted_vals[k]


def time_calls(fn, min_time_s, min_iters, warm_calls, warm_s, max_iters):
    t_end = time.perf_counter() + warm_s
    n = 0
    while n < warm_calls or time.perf_counter() < t_end:
        fn()
        n += 1
    us = []
    t_end = time.perf_counter() + min_time_s
    while len(us) < min_iters or time.perf_counter() < t_end:
        t0 = time.perf_counter()
        fn()
        us.append((time.perf_counter() - t0) * 1e6)
        if len(us) >= max_iters:
            break
    us.sort()
    return us
