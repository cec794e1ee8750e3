#!/usr/bin/env python3
"""warpkv's k-means against the peers a user would reach for (issue 8), as JSON lines.

    python3 bench/peers/kmeans_peers.py --bench build/dev/tools/warpkv-bench/warpkv-bench \\
        [--sizes 2^20x4x16,2^24x128x1024] [--precision fp32,tf32] [--peers warpkv,pytorch,sklearn]
        [--datasets blobs,digits] [--iters 5] [--repeats 3] [--out peers.jsonl] [--backend host] [--check]

Datasets: `blobs` (Gaussian blobs around K centres in [-10, 10]^D, one problem per --sizes entry
NxDxK; numpy makes them, or torch on the GPU when N x D is large and torch has CUDA), and
`digits` (scikit-learn's bundled handwritten digits, 1797 x 64, k = 10, run to convergence).
Every peer starts from the same K initial centroids (points drawn with --seed), so cluster
indices correspond and label agreement is the fraction of equal labels.

  warpkv   `warpkv-bench kmeans --input FILE --init-file FILE --precision ...` (CUDA events
           around fit() on device-resident points)
  pytorch  a plain Lloyd iteration on the GPU: distances ||x||^2 - 2 x.c + ||c||^2 by matmul in
           chunks of <= 1 GiB, argmin, index_add_ sums, bincount counts, empty clusters keep
           their centroid; fp32 (matmul TF32 off) and tf32 (on)
  sklearn  KMeans(init=centroids, n_init=1, tol=0, algorithm="lloyd") on all host cores (its
           OpenMP threads), float32 input, only where N <= --sklearn-max-n (default 2^20)

ms per iteration, for every peer alike: (fit of --iters iterations - fit of 1) / (iterations - 1),
medians over --repeats after one warm-up, so the one-off costs of a fit (input checks, copies,
init, the final labels) are not counted. A peer that is not importable, or PyTorch without a
GPU, gets a row with "skipped" saying so, and the run goes on.

One JSON line per (dataset, size, peer, precision): ms_per_iteration, iterations, inertia and,
for the peers, warpkv_ms_per_iteration, speedup_of_warpkv (peer ms / warpkv ms of the same
precision; against scikit-learn, which is fp32 only, each warpkv precision gets its own row),
the issue's target ratio (2.5x PyTorch fp32, 5x PyTorch tf32, 50x scikit-learn) and whether it
is met, label_agreement_with_warpkv, inertia_rel_diff_vs_warpkv, max_centroid_diff_vs_warpkv.
The digits rows carry no times (a 1797-point fit measures overheads only). scikit-learn runs
them twice: on the dataset's own float64 (the double-precision reference; warpkv's fixed-point
sums make its fp32 fit land on the same centroids) and on float32 (its float32 sums can settle
on a neighbouring fixed point: a few labels and ~1e-5 of inertia apart).
--check exits 1 when a --check-peers row (default scikit-learn on float64, PyTorch fp32) has
label agreement with warpkv's fp32 below --check-agreement or an inertia differing by more
than --check-inertia (relative); the CI test bench_peers_digits runs it on the host backend.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

try:
    import numpy as np
except ImportError as _e:  # 77: ctest's skip code (bench_peers_digits)
    print(f"[kmeans_peers] skipped: numpy is not importable ({_e}); scripts/install-deps installs it", file=sys.stderr)
    sys.exit(77)

TARGETS = {("pytorch", "fp32"): 2.5, ("pytorch", "tf32"): 5.0, ("sklearn", "fp32"): 50.0, ("sklearn", "tf32"): 50.0}


def count(text):
    """'2^20', '1e6' or '1048576'."""
    text = text.strip()
    if "^" in text:
        b, e = text.split("^")
        return int(b) ** int(e)
    return int(float(text))


def parse_sizes(text):
    out = []
    for part in text.split(","):
        n, d, k = part.lower().split("x")
        out.append((count(n), int(d), int(k)))
    return out


def import_torch():
    try:
        import torch
    except ImportError as e:
        return None, f"PyTorch is not importable here ({e})"
    if not torch.cuda.is_available():
        return None, "PyTorch has no CUDA device here"
    return torch, None


def blobs(n, d, k, seed, torch):
    """n points around k centres (unit Gaussian noise) and k initial centroids drawn from them."""
    if torch is not None and n * d > (1 << 27):  # numpy would take tens of seconds
        g = torch.Generator(device="cuda").manual_seed(seed)
        centres = torch.rand(k, d, generator=g, device="cuda") * 20 - 10
        labels = torch.randint(0, k, (n,), generator=g, device="cuda")
        x = centres[labels] + torch.randn(n, d, generator=g, device="cuda")
        init = x[torch.randperm(n, generator=g, device="cuda")[:k]]
        return x.cpu().numpy(), init.cpu().numpy(), "torch-cuda"
    rng = np.random.default_rng(seed)
    centres = rng.uniform(-10, 10, size=(k, d)).astype(np.float32)
    labels = rng.integers(0, k, size=n)
    x = centres[labels] + rng.standard_normal(size=(n, d), dtype=np.float32)
    init = x[rng.choice(n, size=k, replace=False)]
    return np.ascontiguousarray(x, np.float32), np.ascontiguousarray(init, np.float32), "numpy"


def digits(seed):
    from sklearn.datasets import load_digits
    x = np.ascontiguousarray(load_digits().data, dtype=np.float32)
    init = x[np.random.default_rng(seed).choice(x.shape[0], size=10, replace=False)].copy()
    return x, init


def per_iteration(ms_many, ms_one, iterations):
    """ms per iteration from a fit of `iterations` and a fit of one: their difference over the
    extra iterations. When that difference is not positive (fixed costs of the one-iteration fit,
    such as scikit-learn's convergence warning, outweigh cheap iterations: seen at n = 2^20, d = 4
    on the H100 machine), the whole fit's average instead, which includes the fixed cost and so
    errs in the peer's disfavour rather than giving a negative time."""
    if iterations > 1 and ms_many > ms_one:
        return (ms_many - ms_one) / (iterations - 1)
    return ms_many / max(iterations, 1)


def timing_method(ms_many, ms_one, iterations):
    return "difference of fits" if iterations > 1 and ms_many > ms_one else "fit average"


def timed(fn, repeats, sync=lambda: None):
    """One warm-up, then the median wall time (ms) of `repeats` calls, and the last result."""
    times, out = [], None
    for r in range(repeats + 1):
        sync()
        t0 = time.perf_counter()
        out = fn()
        sync()
        if r > 0:
            times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times), out


# ---- warpkv ---------------------------------------------------------------------------------
def run_warpkv(a, x, init, iters, precisions, tmp):
    n, d = x.shape
    k = init.shape[0]
    data, ini = os.path.join(tmp, "x.f32"), os.path.join(tmp, "init.f32")
    lab, cen = os.path.join(tmp, "labels.i32"), os.path.join(tmp, "centroids.f32")
    x.tofile(data)
    init.tofile(ini)
    cmd = [a.bench, "kmeans", "--input", data, "--init-file", ini, "--n", str(n), "--shapes", f"{d}x{k}",
           "--iters", str(iters), "--tol", "0", "--labels-out", lab, "--centroids-out", cen,
           "--precision", ",".join(precisions), "--repeats", str(a.repeats), "--warmup", "1"]
    if a.backend:
        cmd += ["--backend", a.backend]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        err = f"warpkv-bench exited {p.returncode}: {p.stderr.strip()[-2000:]}"
        return {prec: {"error": err} for prec in precisions}
    recs = {r["precision"]: r for r in (json.loads(l) for l in p.stdout.splitlines() if l.startswith("{"))}
    out = {}
    for prec in precisions:
        rec = recs.get(prec)
        if rec is None:
            out[prec] = {"error": f"warpkv-bench printed no {prec} record"}
            continue
        suffix = f".{prec}" if len(precisions) > 1 else ""
        out[prec] = {"ms_per_iteration": rec["ms_per_iteration"], "fit_ms": rec["fit_median_ms"],
                     "fit_1iter_ms": rec["fit_1iter_median_ms"], "iterations": rec["iterations"],
                     "converged": rec["converged"], "inertia": rec["inertia"], "backend": rec["backend"],
                     "device": rec["device"], "commit": rec.get("commit"),
                     "_labels": np.fromfile(lab + suffix, dtype=np.int32),
                     "_centroids": np.fromfile(cen + suffix, dtype=np.float32).reshape(k, d)}
    return out


# ---- PyTorch --------------------------------------------------------------------------------
def torch_lloyd(torch, x, c, iters, chunk):
    """`iters` Lloyd iterations (fewer if the centroids stop moving), then the labels and inertia
    against the final centroids (what warpkv and scikit-learn report)."""
    n = x.shape[0]
    k = c.shape[0]
    xx = (x * x).sum(1)
    labels = torch.empty(n, dtype=torch.long, device=x.device)
    done = 0
    for it in range(iters):
        cc = (c * c).sum(1)
        for s in range(0, n, chunk):
            dist = xx[s:s + chunk, None] - 2.0 * (x[s:s + chunk] @ c.T) + cc[None, :]
            labels[s:s + chunk] = dist.argmin(1)
        sums = torch.zeros_like(c).index_add_(0, labels, x)
        counts = torch.bincount(labels, minlength=k).to(x.dtype)
        nc = torch.where(counts[:, None] > 0, sums / counts.clamp(min=1)[:, None], c)
        shift = float(((nc - c) ** 2).sum())  # the convergence test: one host read per iteration
        c = nc
        done = it + 1
        if shift == 0.0:
            break
    cc = (c * c).sum(1)
    inertia = 0.0
    for s in range(0, n, chunk):
        dist = xx[s:s + chunk, None] - 2.0 * (x[s:s + chunk] @ c.T) + cc[None, :]
        m, labels[s:s + chunk] = dist.min(1)
        inertia += float(m.clamp(min=0).double().sum())
    return c, labels, inertia, done


def set_torch_tf32(torch, on):
    m = torch.backends.cuda.matmul
    if hasattr(m, "fp32_precision"):  # PyTorch >= 2.9
        m.fp32_precision = "tf32" if on else "ieee"
    else:
        m.allow_tf32 = on


def run_torch(a, torch, x, init, iters, precisions):
    xt = torch.from_numpy(x).cuda()
    ct = torch.from_numpy(init).cuda()
    chunk = max(1, min(x.shape[0], (1 << 28) // max(1, init.shape[0])))  # distance block <= 1 GiB
    out = {}
    for prec in precisions:
        if prec not in ("fp32", "tf32"):
            out[prec] = {"skipped": f"no {prec} mode in the PyTorch peer"}
            continue
        set_torch_tf32(torch, prec == "tf32")
        one, _ = timed(lambda: torch_lloyd(torch, xt, ct.clone(), 1, chunk), a.repeats, torch.cuda.synchronize)
        many, (c, labels, inertia, done) = timed(lambda: torch_lloyd(torch, xt, ct.clone(), iters, chunk), a.repeats,
                                                 torch.cuda.synchronize)
        out[prec] = {"ms_per_iteration": per_iteration(many, one, done),
                     "timing_method": timing_method(many, one, done), "fit_ms": many, "fit_1iter_ms": one,
                     "iterations": done, "inertia": inertia, "device": torch.cuda.get_device_name(0),
                     "torch": torch.__version__, "chunk_rows": chunk,
                     "_labels": labels.cpu().numpy().astype(np.int32), "_centroids": c.cpu().numpy()}
    set_torch_tf32(torch, False)
    del xt, ct
    torch.cuda.empty_cache()
    return out


# ---- scikit-learn ---------------------------------------------------------------------------
def run_sklearn(a, x, init, iters, dtype):
    try:
        import sklearn
        from sklearn.cluster import KMeans
    except ImportError as e:
        return {"skipped": f"scikit-learn is not importable here ({e})"}
    threads = None
    try:
        from threadpoolctl import threadpool_info
        threads = {i["user_api"]: i["num_threads"] for i in threadpool_info()}
    except Exception:  # threadpoolctl is a scikit-learn dependency; the thread count is only informative
        pass

    x, init = x.astype(dtype), init.astype(dtype)

    def fit(max_iter):
        km = KMeans(n_clusters=init.shape[0], init=init, n_init=1, max_iter=max_iter, tol=0.0, algorithm="lloyd")
        return km.fit(x)

    one, _ = timed(lambda: fit(1), a.sklearn_repeats)
    many, km = timed(lambda: fit(iters), a.sklearn_repeats)
    return {"ms_per_iteration": per_iteration(many, one, int(km.n_iter_)),
            "timing_method": timing_method(many, one, int(km.n_iter_)), "fit_ms": many, "fit_1iter_ms": one,
            "iterations": int(km.n_iter_), "inertia": float(km.inertia_), "sklearn": sklearn.__version__,
            "host_cpus": os.cpu_count(), "threads": threads, "input_dtype": np.dtype(dtype).name,
            "_labels": km.labels_.astype(np.int32), "_centroids": km.cluster_centers_.astype(np.float32)}


# ---- rows -----------------------------------------------------------------------------------
def compare(row, peer, ref, timing):
    """Adds the agreement and (with `timing`) ratio fields of `peer` against warpkv's result `ref`."""
    if "_labels" in peer and "_labels" in ref:
        row["label_agreement_with_warpkv"] = float((peer["_labels"] == ref["_labels"]).mean())
        row["max_centroid_diff_vs_warpkv"] = float(np.abs(peer["_centroids"] - ref["_centroids"]).max())
        row["inertia_rel_diff_vs_warpkv"] = (peer["inertia"] - ref["inertia"]) / max(abs(ref["inertia"]), 1e-30)
    if timing and ref.get("ms_per_iteration") and peer.get("ms_per_iteration"):
        row["warpkv_ms_per_iteration"] = ref["ms_per_iteration"]
        row["speedup_of_warpkv"] = peer["ms_per_iteration"] / ref["ms_per_iteration"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", default="build/dev/tools/warpkv-bench/warpkv-bench", help="the warpkv-bench binary")
    ap.add_argument("--backend", help="warpkv-bench --backend (cuda, host; default: its own choice)")
    ap.add_argument("--datasets", default="blobs,digits", help="blobs and/or digits")
    ap.add_argument("--sizes", default="2^20x4x16,2^20x32x256,2^20x128x1024,2^24x4x16,2^24x32x256,2^24x128x1024",
                    help="blobs problems NxDxK, comma-separated")
    ap.add_argument("--precision", default="fp32,tf32", help="warpkv and PyTorch distance precisions")
    ap.add_argument("--peers", default="warpkv,pytorch,sklearn")
    ap.add_argument("--iters", type=int, default=5, help="Lloyd iterations per timed fit (blobs; digits runs to convergence)")
    ap.add_argument("--digits-max-iter", type=int, default=300)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--sklearn-repeats", type=int, default=1)
    ap.add_argument("--sklearn-max-n", default="2^20", help="scikit-learn only where N is at most this")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--out", help="append the JSON lines here too")
    ap.add_argument("--check", action="store_true", help="exit 1 when an fp32 peer disagrees with warpkv (see below)")
    ap.add_argument("--check-peers", default="sklearn:fp64,pytorch:fp32",
                    help="PEER:PRECISION rows that --check compares with warpkv's fp32")
    ap.add_argument("--check-agreement", type=float, default=0.999)
    ap.add_argument("--check-inertia", type=float, default=1e-4)
    a = ap.parse_args()
    if a.iters < 2:
        ap.error("--iters must be at least 2 (ms per iteration is a difference of fits)")
    peers = [p for p in a.peers.split(",") if p]
    precisions = [p for p in a.precision.split(",") if p]
    sklearn_max_n = count(a.sklearn_max_n)
    out = open(a.out, "a") if a.out else None
    failures = []
    checked = 0
    torch, torch_why = import_torch() if "pytorch" in peers or "blobs" in a.datasets else (None, None)

    def emit(row):
        text = json.dumps(row)
        print(text, flush=True)
        if out:
            out.write(text + "\n")
            out.flush()

    problems = []
    for ds in a.datasets.split(","):
        if ds == "digits":
            problems.append(("digits", None))
        elif ds == "blobs":
            problems += [("blobs", s) for s in parse_sizes(a.sizes)]
        elif ds:
            ap.error(f"unknown dataset {ds!r} (blobs, digits)")

    with tempfile.TemporaryDirectory() as tmp:
        for ds, size in problems:
            t0 = time.perf_counter()
            if ds == "digits":
                try:
                    x, init = digits(a.seed)
                except ImportError as e:
                    emit({"tool": "kmeans_peers", "dataset": "digits", "skipped": f"scikit-learn is not importable ({e})"})
                    continue
                gen, iters = "sklearn.datasets.load_digits", a.digits_max_iter
            else:
                x, init, gen = blobs(*size, a.seed, torch)
                if torch is not None:
                    torch.cuda.empty_cache()  # the generator's temporaries, before warpkv-bench runs
                iters = a.iters
            n, d = x.shape
            k = init.shape[0]
            base = {"tool": "kmeans_peers", "dataset": ds, "n": n, "d": d, "k": k, "generator": gen,
                    "max_iter": iters, "seed": a.seed}
            print(f"[kmeans_peers] {ds} n={n} d={d} k={k} ({gen}, {time.perf_counter() - t0:.1f} s)", file=sys.stderr)
            results = {}

            def guarded(peer, fn, keys):
                """A peer that raises gets an "error" row per precision; the others still run."""
                try:
                    return fn()
                except Exception as e:  # noqa: BLE001 - reported in the rows, never swallowed silently
                    print(f"[kmeans_peers]   {peer}: {type(e).__name__}: {e}", file=sys.stderr)
                    return {p: {"error": f"{type(e).__name__}: {e}"} for p in keys}

            if "warpkv" in peers:
                results["warpkv"] = guarded("warpkv", lambda: run_warpkv(a, x, init, iters, precisions, tmp), precisions)
            if "pytorch" in peers:
                results["pytorch"] = ({p: {"skipped": torch_why} for p in precisions} if torch is None else guarded(
                    "pytorch", lambda: run_torch(a, torch, x, init, iters, precisions), precisions))
            if "sklearn" in peers:
                # float32 input like warpkv's; the digits ship as float64, which scikit-learn then
                # computes in (the double-precision reference), and float32 beside it
                dtypes = {"fp64": np.float64, "fp32": np.float32} if ds == "digits" else {"fp32": np.float32}
                if n > sklearn_max_n:
                    results["sklearn"] = {"fp32": {"skipped": f"n > --sklearn-max-n ({sklearn_max_n})"}}
                else:
                    results["sklearn"] = guarded("sklearn", lambda: {p: run_sklearn(a, x, init, iters, t)
                                                                      for p, t in dtypes.items()}, list(dtypes))
            ref = results.get("warpkv", {})
            for peer, by_prec in results.items():
                for prec, res in by_prec.items():
                    # scikit-learn is fp32 only: one row per warpkv precision against it
                    against = precisions if peer == "sklearn" else [prec]
                    for wprec in against:
                        row = dict(base, peer=peer, precision=prec)
                        if peer == "sklearn":
                            row["warpkv_precision"] = wprec
                        row.update({key: v for key, v in res.items() if not key.startswith("_")})
                        if ds == "digits":  # a 1797-point problem times nothing but overheads
                            row.pop("ms_per_iteration", None)
                        w = ref.get(wprec, {})
                        if peer != "warpkv":
                            compare(row, res, w, timing=ds != "digits")
                            target = TARGETS.get((peer, wprec))
                            if target and "speedup_of_warpkv" in row:
                                row["target_speedup"] = target
                                row["meets_target"] = row["speedup_of_warpkv"] >= target
                            if (a.check and wprec == "fp32" and f"{peer}:{prec}" in a.check_peers.split(",")
                                    and "skipped" not in res):
                                checked += 1
                                agree = row.get("label_agreement_with_warpkv")
                                rel = row.get("inertia_rel_diff_vs_warpkv")
                                if agree is None or agree < a.check_agreement or abs(rel) > a.check_inertia:
                                    failures.append(f"{ds} n={n} d={d} k={k} {peer}: agreement {agree}, "
                                                    f"inertia rel diff {rel} (want >= {a.check_agreement}, "
                                                    f"<= {a.check_inertia})")
                        elif a.check and "error" in res:
                            failures.append(f"{ds} warpkv {prec}: {res['error']}")
                        emit(row)
                        if "skipped" in res:
                            print(f"[kmeans_peers]   {peer} {prec}: SKIPPED: {res['skipped']}", file=sys.stderr)
                        elif "error" in res:
                            print(f"[kmeans_peers]   {peer} {prec}: ERROR: {res['error']}", file=sys.stderr)
                        else:
                            extra = ""
                            if "speedup_of_warpkv" in row:
                                extra = (f", warpkv {wprec} {row['speedup_of_warpkv']:.2f}x faster"
                                         f"{'' if 'target_speedup' not in row else ' (target %gx)' % row['target_speedup']}")
                            if "label_agreement_with_warpkv" in row:
                                extra += (f", labels {row['label_agreement_with_warpkv']:.6f} equal, inertia "
                                          f"{row['inertia_rel_diff_vs_warpkv']:+.2e}")
                            speed = (f"{row['ms_per_iteration']:.3f} ms/iteration" if "ms_per_iteration" in row
                                     else f"fit {row['fit_ms']:.1f} ms")
                            print(f"[kmeans_peers]   {peer} {prec}: {speed}, {res['iterations']} iterations{extra}",
                                  file=sys.stderr)
    if out:
        out.close()
    for f in failures:
        print(f"[kmeans_peers] CHECK FAILED: {f}", file=sys.stderr)
    if a.check and not failures and checked == 0:
        print("[kmeans_peers] skipped: --check found nothing to compare (a peer not importable?)", file=sys.stderr)
        return 77
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
