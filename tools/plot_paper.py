#!/usr/bin/env python3
"""Plot the records of `warpkv-bench paper` (paper.jsonl) like the GLHT paper's figures.

    python3 tools/plot_paper.py bench/results/paper-cuda/paper.jsonl -o bench/results/paper-cuda

Writes into the output folder:
  paper-static.png             Figs. 9 and 10: build and retrieve throughput vs key count, one line per map
  paper-dynamic.png            Figs. 11 and 12: throughput per key range, one bar group per range, one bar per
                               map, one panel per mix (1e5 operations)
  paper-large-<ops>.png        the same for each large batch size
Throughput is M ops/s at the median run; error bars span the fastest and slowest run. Host-backend
runs say so in every title: their numbers are CPU timings, not GPU figures.
"""
import argparse
import json
import os
import sys
from collections import OrderedDict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)


def read(path):
    recs = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line.startswith("{"):
                try:
                    r = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if r.get("workload") == "paper" and r.get("median_ms"):
                    recs.append(r)
    return recs


def mops(r):
    ops = r["ops"]
    med = ops / (r["median_ms"] * 1e3)
    lo = ops / (r["max_ms"] * 1e3) if r.get("max_ms") else med
    hi = ops / (r["min_ms"] * 1e3) if r.get("min_ms") else med
    return med, med - lo, hi - med


def title_note(recs):
    r = recs[0]
    note = f"{r.get('device', '?')} | backend {r.get('backend', '?')} | commit {r.get('commit', '?')}"
    if r.get("backend") == "host":
        note += "\nHOST BACKEND: CPU wall-clock timings of emulated warps, NOT GPU figures"
    return note


def labels(recs):
    out = OrderedDict()
    for r in recs:
        out.setdefault(r["map"], r.get("label", r["map"]))
    return out


def plot_static(recs, out_dir):
    st = [r for r in recs if r["part"] == "static"]
    if not st:
        return None
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.8))
    for ax, op, name in zip(axes, ["build", "retrieve"], ["Fig. 9: build", "Fig. 10: retrieve"]):
        for m, label in labels(st).items():
            rows = sorted((r for r in st if r["map"] == m and r["operation"] == op), key=lambda r: r["keys"])
            if not rows:
                continue
            vals = [mops(r) for r in rows]
            ax.errorbar([r["keys"] for r in rows], [v[0] for v in vals],
                        yerr=[[v[1] for v in vals], [v[2] for v in vals]], marker="o", capsize=3, label=label)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("keys (load factor 0.8)")
        ax.set_ylabel("M keys/s")
        ax.set_title(name)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(title_note(st), fontsize=9)
    fig.tight_layout()
    path = os.path.join(out_dir, "paper-static.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_mixes(recs, out_dir, part, ops, name):
    rs = [r for r in recs if r["part"] == part and r["ops"] == ops]
    if not rs:
        return None
    mixes = list(OrderedDict.fromkeys(r["mix"] for r in rs))
    maps = labels(rs)
    fig, axes = plt.subplots(1, len(mixes), figsize=(6.5 * len(mixes), 4.8), squeeze=False)
    for ax, mix in zip(axes[0], mixes):
        ranges = sorted({r["key_range"] for r in rs if r["mix"] == mix})
        width = 0.8 / max(1, len(maps))
        for i, (m, label) in enumerate(maps.items()):
            xs, ys, lo, hi = [], [], [], []
            for j, rng in enumerate(ranges):
                hit = [r for r in rs if r["mix"] == mix and r["map"] == m and r["key_range"] == rng]
                if hit:
                    v = mops(hit[-1])
                    xs.append(j + (i - (len(maps) - 1) / 2) * width)
                    ys.append(v[0])
                    lo.append(v[1])
                    hi.append(v[2])
            if xs:
                ax.bar(xs, ys, width, yerr=[lo, hi], capsize=2, label=label)
        ax.set_xticks(range(len(ranges)))
        ax.set_xticklabels([f"{r:g}" for r in ranges])
        ax.set_xlabel("key range")
        ax.set_ylabel("M ops/s")
        ax.set_yscale("log")
        ax.set_title(f"[{mix.replace('/', ',')}], {ops:g} operations")
        ax.grid(True, axis="y", alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(title_note(rs), fontsize=9)
    fig.tight_layout()
    path = os.path.join(out_dir, name)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("jsonl")
    ap.add_argument("-o", "--out-dir", default=".")
    args = ap.parse_args(argv)
    recs = read(args.jsonl)
    if not recs:
        print(f"{args.jsonl}: no paper records", file=sys.stderr)
        return 1
    os.makedirs(args.out_dir, exist_ok=True)
    written = [plot_static(recs, args.out_dir)]
    for ops in sorted({r["ops"] for r in recs if r["part"] == "dynamic"}):
        written.append(plot_mixes(recs, args.out_dir, "dynamic", ops, "paper-dynamic.png"))
    for ops in sorted({r["ops"] for r in recs if r["part"] == "large"}):
        written.append(plot_mixes(recs, args.out_dir, "large", ops, f"paper-large-{ops:g}.png"))
    for w in written:
        if w:
            print(f"wrote {w}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
