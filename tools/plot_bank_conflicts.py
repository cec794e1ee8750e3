#!/usr/bin/env python3
"""Plot `warpkv-bench bank-conflicts` JSON lines: slowdown vs stride (PNG).

    python3 tools/plot_bank_conflicts.py bank_conflicts.jsonl [--ncu bank_conflicts_ncu.json] -o plots/

Writes bank-conflicts-<device>.png: one panel per operation (load, store), one line per element
kind (u32, u64, u8) with the bank model's wavefronts per access dotted beside it, and a panel of
struct layouts (AoS vs SoA, 1..8 members). With --ncu, the measured bank-conflict counter per
access is drawn too (the two must tell the same story).
"""
import argparse
import json
import os
import re

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results", nargs="+")
    ap.add_argument("--ncu", help="JSON from scripts/gpu-kmeans (per-record bank-conflict counters)")
    ap.add_argument("-o", "--out", default=".")
    a = ap.parse_args()
    recs = []
    for p in a.results:
        with open(p) as f:
            for line in f:
                line = line.strip()
                if line.startswith("{"):
                    r = json.loads(line)
                    if r.get("workload") == "bank-conflicts":
                        recs.append(r)
    if not recs:
        raise SystemExit("no bank-conflicts records")
    ncu = {}
    if a.ncu and os.path.exists(a.ncu):
        with open(a.ncu) as f:
            for row in json.load(f).get("records", []):
                key = (row["kind"], row["op"], row.get("stride"), row.get("layout"), row.get("members"))
                ncu[key] = row
    device = re.sub(r"[^A-Za-z0-9]+", "_", recs[0].get("device", "gpu"))
    os.makedirs(a.out, exist_ok=True)
    fig, axes = plt.subplots(1, 3, figsize=(18, 5))
    for ax, op in zip(axes[:2], ["load", "store"]):
        for kind, color in [("u32", "C0"), ("u64", "C1"), ("u8", "C2")]:
            rs = sorted((r for r in recs if r["kind"] == kind and r["op"] == op), key=lambda r: r["stride"])
            if not rs:
                continue
            xs = [r["stride"] for r in rs]
            ax.plot(xs, [r["slowdown_vs_stride1"] for r in rs], "o-", color=color, label=f"{kind} measured")
            base = rs[0]["model_wavefronts"]
            ax.plot(xs, [r["model_wavefronts"] / base for r in rs], ":", color=color, label=f"{kind} bank model")
            ks = [(kind, op, r["stride"], None, None) for r in rs]
            if ncu and all(k in ncu for k in ks):
                w = [ncu[k].get("wavefronts_per_access") for k in ks]
                if all(v is not None for v in w) and w[0]:
                    ax.plot(xs, [v / w[0] for v in w], "x--", color=color, label=f"{kind} ncu wavefronts")
        ax.set_xlabel("stride (elements)")
        ax.set_ylabel("time / time at stride 1")
        ax.set_title(f"full-warp shared-memory {op}s")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    ax = axes[2]
    for op, style in [("load", "o-"), ("store", "s--")]:
        rs = sorted((r for r in recs if r["kind"] == "struct" and r["op"] == op and r["layout"] == "aos"),
                    key=lambda r: r["members"])
        if rs:
            ax.plot([r["members"] for r in rs], [r["slowdown_vs_soa"] for r in rs], style, label=f"AoS/SoA {op}")
    ax.set_xlabel("32-bit members per struct")
    ax.set_ylabel("AoS time / SoA time")
    ax.set_title("structs in shared memory: even members conflict")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    fig.suptitle(f"bank conflicts on {recs[0].get('device', '?')}")
    fig.tight_layout()
    path = os.path.join(a.out, f"bank-conflicts-{device}.png")
    fig.savefig(path, dpi=110)
    print(path)


if __name__ == "__main__":
    main()
