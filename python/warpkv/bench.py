"""python -m warpkv.bench: bulk insert and find from Python, against what a user would try first.

For each size n (2^k unique random int32 keys and values, a table of 2n slots: load 0.5, as
`warpkv-bench static --load-factors 0.5`) it times, as medians of --repeats runs:
  - warpkv maps (HopscotchMap by default): insert into a cleared map, find every key;
  - a Python dict (host; n <= 2^--dict-max): dict(zip(keys, values)), then [d.get(k) for k in keys];
  - a sort-based join in NumPy (argsort, then searchsorted + gather; on the host, n <= 2^--host-max
    beside a device framework), and the same in PyTorch (torch.sort / torch.searchsorted) and CuPy
    on the device when --framework is torch / cupy;
  - with --cpp PATH, `warpkv-bench static` (the C++ bulk call) on the same sizes and maps.
Finds look the keys up in a random order (as warpkv-bench static's find_hit does), the same order
for every implementation.
Rows are JSON lines (stdout, and --out FILE). Not part of CI."""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import sys
import time
from typing import Callable, List

import numpy as np

import warpkv


def _sync(framework: str) -> Callable[[], None]:
    if framework == "torch":
        import torch

        return torch.cuda.synchronize if torch.cuda.is_available() else (lambda: None)
    if framework == "cupy":
        import cupy

        return cupy.cuda.Device().synchronize
    return lambda: None


def _median_ms(fn: Callable[[], None], before: Callable[[], None], sync: Callable[[], None], repeats: int,
               warmup: int = 1) -> float:
    samples = []
    for i in range(warmup + repeats):
        before()
        sync()
        t = time.perf_counter()
        fn()
        sync()
        if i >= warmup:
            samples.append((time.perf_counter() - t) * 1e3)
    return statistics.median(samples)


def _device_name(framework: str) -> str:
    if framework == "torch":
        import torch

        if torch.cuda.is_available():
            return torch.cuda.get_device_name()
    if framework == "cupy":
        import cupy

        return cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
    return platform.processor() or platform.machine()


def _inputs(framework: str, n: int, seed: int):
    """(keys, values, queries, expected) on the host, then the same four in `framework`: queries
    are the keys in a random order (every lookup hits), expected their values."""
    rng = np.random.default_rng(seed)
    # distinct scattered keys without a 2^31 permutation: x -> x * odd mod 2^30 is a bijection, a
    # random offset varies them, + 1 keeps them off the sentinels
    off = int(rng.integers(0, 1 << 30))
    keys = (((np.arange(n, dtype=np.int64) + off) * 2654435761) % (1 << 30) + 1).astype(np.int32)
    values = rng.integers(0, 2**31 - 1, size=n, dtype=np.int32)
    perm = rng.permutation(n)
    host = (keys, values, keys[perm], values[perm])
    if framework == "torch":
        import torch

        dev = "cuda" if torch.cuda.is_available() else "cpu"
        return host, tuple(torch.from_numpy(a).to(dev) for a in host)
    if framework == "cupy":
        import cupy

        return host, tuple(cupy.asarray(a) for a in host)
    return host, host


def _sort_join(framework: str):
    """(build(keys, values) -> index, find(index, queries) -> (values, found)) of a sort join."""
    if framework == "torch":
        import torch

        def build(k, v):
            sk, order = torch.sort(k)
            return sk, v[order]

        def find(ix, q):
            sk, sv = ix
            i = torch.searchsorted(sk, q).clamp_(max=sk.numel() - 1)
            return sv[i], sk[i] == q

        return "torch.sort+searchsorted", build, find
    xp = np
    if framework == "cupy":
        import cupy as xp  # noqa: F811

    def build(k, v):
        order = xp.argsort(k)
        return k[order], v[order]

    def find(ix, q):
        sk, sv = ix
        i = xp.minimum(xp.searchsorted(sk, q), sk.size - 1)
        return sv[i], sk[i] == q

    return f"{'cupy' if framework == 'cupy' else 'numpy'}.argsort+searchsorted", build, find


def run(args) -> List[dict]:
    fw = args.framework
    sync = _sync(fw)
    base = {"tool": "warpkv.bench", "framework": fw, "device": _device_name(fw), "built_backend": warpkv.built_backend,
            "backend": "cuda" if (fw != "numpy" and warpkv.cuda_available()) else "host", "repeats": args.repeats}
    rows = []

    def emit(**r):
        row = dict(base, **r)
        if row.get("median_ms"):
            row["mops"] = row["n"] / (row["median_ms"] * 1e3)
        rows.append(row)
        print(json.dumps(row), flush=True)
        if args.out:  # row by row: a run cut short keeps what it measured
            with open(args.out, "a") as f:
                f.write(json.dumps(row) + "\n")

    classes = {"hopscotch": warpkv.HopscotchMap, "linear": warpkv.LinearMap, "cuckoo": warpkv.CuckooMap}
    for k in args.sizes:
        n = 1 << k
        (keys_h, values_h, queries_h, _), (keys, values, queries, expect) = _inputs(fw, n, args.seed)
        for name in args.maps:
            m = classes[name](n, "int32", "int32", backend=base["backend"])
            emit(op="insert", impl=f"warpkv.{classes[name].__name__}", n=n, capacity=m.capacity(),
                 median_ms=_median_ms(lambda: m.insert(keys, values), m.clear, sync, args.repeats))
            got, found = m.find(queries)
            ok = bool(found.all()) and bool((got == expect).all())
            emit(op="find_hit", impl=f"warpkv.{classes[name].__name__}", n=n, capacity=m.capacity(), correct=ok,
                 median_ms=_median_ms(lambda: m.find(queries), lambda: None, sync, args.repeats))
            m = None  # frees the table before the next one
        label, build, find = _sort_join(fw)
        emit(op="insert", impl=label, n=n, median_ms=_median_ms(lambda: build(keys, values), lambda: None, sync,
                                                                args.repeats))
        ix = build(keys, values)
        emit(op="find_hit", impl=label, n=n, median_ms=_median_ms(lambda: find(ix, queries), lambda: None, sync,
                                                                  args.repeats))
        ix = None
        if fw != "numpy" and n <= (1 << args.host_max):  # the host join a user would reach for, on the host copy
            label, build, find = _sort_join("numpy")
            emit(op="insert", impl=label, n=n, median_ms=_median_ms(lambda: build(keys_h, values_h), lambda: None,
                                                                    lambda: None, args.repeats))
            ixh = build(keys_h, values_h)
            emit(op="find_hit", impl=label, n=n, median_ms=_median_ms(lambda: find(ixh, queries_h), lambda: None,
                                                                      lambda: None, args.repeats))
        if n <= (1 << args.dict_max):
            kl, vl, ql = keys_h.tolist(), values_h.tolist(), queries_h.tolist()
            box = {}

            def build_dict():
                box["d"] = dict(zip(kl, vl))

            emit(op="insert", impl="dict", n=n, median_ms=_median_ms(build_dict, lambda: None, lambda: None,
                                                                     max(1, args.repeats // 2)))
            d = box["d"]
            emit(op="find_hit", impl="dict", n=n, median_ms=_median_ms(lambda: [d.get(q) for q in ql], lambda: None,
                                                                       lambda: None, max(1, args.repeats // 2)))
            box.clear()
        if args.cpp:
            _cpp_rows(args, base, k, emit)
    return rows


# the rows of `warpkv-bench static` that time the C++ counterpart of each Python map class
_CPP_MAP_NAMES = {"hopscotch": ("hopscotch_map",), "linear": ("linear_map", "open_addressing_map"),
                  "cuckoo": ("cuckoo_map",)}


def _cpp_rows(args, base, k, emit) -> None:
    """`warpkv-bench static` at the same tables: capacity 2^(k+1), load 0.5 (2^k keys), u32/u32,
    tile 4 (the Python classes' tile), for each map of --maps. Its times are CUDA-event times of
    the bulk call; the Python rows are wall-clock times of the call from Python with a device
    synchronize (the binding's overhead is their difference)."""
    cap = 1 << (k + 1)
    cmd = [args.cpp, "static", "--map", ",".join(args.maps), "--tile", "4", "--keys", str(int(cap * 0.95)),
           "--load-factors", "0.5", "--backend", base["backend"], "--repeats", str(args.repeats)]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=600).stdout
    except (OSError, subprocess.SubprocessError) as e:
        print(f"warpkv.bench: {' '.join(cmd)} failed: {e}", file=sys.stderr)
        return
    for line in out.splitlines():
        if not line.startswith("{"):
            continue
        r = json.loads(line)
        for name in args.maps:
            if r.get("operation") in ("insert", "find_hit") and r.get("map") in _CPP_MAP_NAMES[name] \
                    and r.get("tile", 4) == 4:
                emit(op=r["operation"], impl=f"c++ warpkv-bench static ({name} u32/u32 T=4)", n=r["keys"],
                     capacity=r.get("capacity"), median_ms=r["median_ms"], verified=r.get("verified"),
                     cpp_commit=r.get("commit"))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m warpkv.bench", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    gpu = warpkv.cuda_available()
    p.add_argument("--framework", choices=["numpy", "torch", "cupy"], default="torch" if gpu else "numpy")
    p.add_argument("--sizes", type=lambda s: [int(x) for x in s.split(",")], default=None,
                   help="log2 of the key counts, comma-separated (default 20,22,24,26 on a GPU, 12,14,16 on the host)")
    p.add_argument("--maps", type=lambda s: s.split(","), default=["hopscotch"],
                   help="hopscotch,linear,cuckoo (default hopscotch)")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--dict-max", type=int, default=22, help="largest log2 size timed with a Python dict")
    p.add_argument("--host-max", type=int, default=22,
                   help="largest log2 size of the NumPy join beside a device framework")
    p.add_argument("--cpp", help="path of warpkv-bench: also time `warpkv-bench static` on the same tables")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--out", help="append the JSON lines to this file")
    args = p.parse_args(argv)
    if args.sizes is None:
        args.sizes = [20, 22, 24, 26] if gpu and args.framework != "numpy" else [12, 14, 16]
    run(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
