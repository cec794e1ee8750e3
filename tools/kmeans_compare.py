#!/usr/bin/env python3
"""The same k-means problem through warpkv, PyTorch and scikit-learn; times and agreement as JSON.

    python3 tools/kmeans_compare.py --bench build/tools/warpkv-bench/warpkv-bench \\
        [--sizes 1048576x4x16,1048576x32x256] [--iters 20] [--out compare.json]

For each N x D x K: Gaussian blobs (numpy, --seed), K initial centroids drawn from the points,
then exactly --iters Lloyd iterations (tol 0; a run may stop earlier only when centroids stop
moving) from those same centroids in
  warpkv    `warpkv-bench kmeans --input ... --init-file ...` (its own timing: CUDA events
            around fit(), median of --repeats, data already on the device)
  pytorch   a straightforward Lloyd in torch on the GPU: distances ||x||^2 - 2 x.c + ||c||^2 by
            chunked matmul, argmin, index_add_ sums, bincount; empty clusters keep their centroid
            (timed with torch.cuda.synchronize, median of --repeats, data already on the device)
  sklearn   KMeans(init=centroids, n_init=1, max_iter=iters, tol=0, algorithm="lloyd") on the
            host when scikit-learn is importable; otherwise the output says it is missing
and reports ms, ms per iteration, inertia, and label agreement of each peer with warpkv (same
initial centroids, so cluster indices correspond: agreement = fraction of equal labels).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np


def blobs(n, d, k, seed):
    rng = np.random.default_rng(seed)
    centres = rng.uniform(-10, 10, size=(k, d)).astype(np.float32)
    labels = rng.integers(0, k, size=n)
    x = centres[labels] + rng.standard_normal(size=(n, d), dtype=np.float32)
    init = x[rng.choice(n, size=k, replace=False)].copy()
    return np.ascontiguousarray(x, dtype=np.float32), np.ascontiguousarray(init, dtype=np.float32)


def run_warpkv(bench, x, init, iters, repeats, tmp):
    n, d = x.shape
    k = init.shape[0]
    data, ini = os.path.join(tmp, "x.f32"), os.path.join(tmp, "init.f32")
    lab, cen = os.path.join(tmp, "labels.i32"), os.path.join(tmp, "centroids.f32")
    x.tofile(data)
    init.tofile(ini)
    cmd = [bench, "kmeans", "--input", data, "--init-file", ini, "--n", str(n), "--shapes", f"{d}x{k}",
           "--iters", str(iters), "--tol", "0", "--labels-out", lab, "--centroids-out", cen,
           "--repeats", str(repeats), "--warmup", "1"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        return {"error": f"warpkv-bench exited {p.returncode}: {p.stderr.strip()[-2000:]}"}
    rec = [json.loads(l) for l in p.stdout.splitlines() if l.startswith("{")][-1]
    out = {"ms": rec["fit_median_ms"], "ms_per_iteration": rec["ms_per_iteration"], "iterations": rec["iterations"],
           "inertia": rec["inertia"], "backend": rec["backend"], "device": rec["device"],
           "note": "fit() on device-resident points, including its data scan, init gather and final assignment"}
    out["_labels"] = np.fromfile(lab, dtype=np.int32)
    out["_centroids"] = np.fromfile(cen, dtype=np.float32).reshape(k, d)
    return out


def torch_lloyd(torch, x, c, iters, chunk):
    n, d = x.shape
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
        shift = float(((nc - c) ** 2).sum())
        c = nc
        done = it + 1
        if shift == 0.0:
            break
    # labels and inertia of the final centroids (as warpkv reports them)
    cc = (c * c).sum(1)
    inertia = 0.0
    for s in range(0, n, chunk):
        dist = xx[s:s + chunk, None] - 2.0 * (x[s:s + chunk] @ c.T) + cc[None, :]
        m, labels[s:s + chunk] = dist.min(1)
        inertia += float(m.clamp(min=0).double().sum())
    return c, labels, inertia, done


def run_torch(x, init, iters, repeats):
    try:
        import torch
    except ImportError:
        return {"skipped": "PyTorch is not importable here"}
    if not torch.cuda.is_available():
        return {"skipped": "PyTorch has no CUDA device here"}
    torch.backends.cuda.matmul.allow_tf32 = False  # fp32 distances, like warpkv's default
    dev = torch.device("cuda")
    xt = torch.from_numpy(x).to(dev)
    ct = torch.from_numpy(init).to(dev)
    chunk = max(1, min(x.shape[0], (1 << 28) // max(1, init.shape[0])))  # distance block <= 1 GiB
    times = []
    for r in range(repeats + 1):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        c, labels, inertia, done = torch_lloyd(torch, xt, ct.clone(), iters, chunk)
        torch.cuda.synchronize()
        if r > 0:
            times.append((time.perf_counter() - t0) * 1e3)
    ms = statistics.median(times)
    return {"ms": ms, "ms_per_iteration": ms / done, "iterations": done, "inertia": inertia,
            "device": torch.cuda.get_device_name(0), "torch": torch.__version__, "tf32": False,
            "_labels": labels.cpu().numpy().astype(np.int32), "_centroids": c.cpu().numpy()}


def run_sklearn(x, init, iters):
    try:
        import sklearn
        from sklearn.cluster import KMeans
    except ImportError:
        return {"skipped": "scikit-learn is not importable on this machine (the GPU machine has none; "
                           "run this script where it is installed for the host comparison)"}
    km = KMeans(n_clusters=init.shape[0], init=init, n_init=1, max_iter=iters, tol=0.0, algorithm="lloyd")
    t0 = time.perf_counter()
    km.fit(x)
    ms = (time.perf_counter() - t0) * 1e3
    return {"ms": ms, "ms_per_iteration": ms / max(1, km.n_iter_), "iterations": int(km.n_iter_),
            "inertia": float(km.inertia_), "sklearn": sklearn.__version__, "host_cpus": os.cpu_count(),
            "_labels": km.labels_.astype(np.int32), "_centroids": km.cluster_centers_.astype(np.float32)}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", default="build/tools/warpkv-bench/warpkv-bench")
    ap.add_argument("--sizes", default="1048576x4x16,1048576x32x256,1048576x128x1024",
                    help="NxDxK or 'digits' (scikit-learn's, when importable), comma-separated")
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--no-sklearn", action="store_true", help="skip scikit-learn even if importable")
    ap.add_argument("--out", help="write the JSON here too")
    a = ap.parse_args()
    report = {"tool": "kmeans_compare", "iters": a.iters, "seed": a.seed, "runs": []}
    with tempfile.TemporaryDirectory() as tmp:
        for size in a.sizes.split(","):
            if size == "digits":  # scikit-learn's handwritten digits, 1797 x 64, k = 10
                try:
                    from sklearn.datasets import load_digits
                except ImportError:
                    report["runs"].append({"dataset": "digits", "skipped": "scikit-learn is not importable here"})
                    continue
                x = np.ascontiguousarray(load_digits().data, dtype=np.float32)
                n, d, k = x.shape[0], x.shape[1], 10
                init = x[np.random.default_rng(a.seed).choice(n, size=k, replace=False)].copy()
                run = {"dataset": "digits", "n": n, "d": d, "k": k}
            else:
                n, d, k = (int(float(v)) for v in size.lower().split("x"))
                x, init = blobs(n, d, k, a.seed)
                run = {"dataset": "blobs", "n": n, "d": d, "k": k}
            peers = {"warpkv": run_warpkv(a.bench, x, init, a.iters, a.repeats, tmp),
                     "pytorch": run_torch(x, init, a.iters, a.repeats)}
            peers["sklearn"] = ({"skipped": "--no-sklearn"} if a.no_sklearn else run_sklearn(x, init, a.iters))
            ref = peers["warpkv"]
            for name, p in peers.items():
                if name != "warpkv" and "_labels" in p and "_labels" in ref:
                    p["label_agreement_with_warpkv"] = float((p["_labels"] == ref["_labels"]).mean())
                    p["max_centroid_diff_vs_warpkv"] = float(np.abs(p["_centroids"] - ref["_centroids"]).max())
                    p["inertia_rel_diff_vs_warpkv"] = (p["inertia"] - ref["inertia"]) / max(abs(ref["inertia"]), 1e-30)
                    if "ms_per_iteration" in ref and p.get("ms_per_iteration"):
                        p["speedup_of_warpkv_per_iteration"] = p["ms_per_iteration"] / ref["ms_per_iteration"]
            for p in peers.values():
                p.pop("_labels", None)
                p.pop("_centroids", None)
            run.update(peers)
            report["runs"].append(run)
            print(json.dumps(run), file=sys.stderr)
    text = json.dumps(report, indent=1)
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
