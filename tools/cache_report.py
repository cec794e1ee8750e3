#!/usr/bin/env python3
"""Markdown tables and PNG plots of `warpkv-bench cache` results (issue 11).

    python3 tools/cache_report.py results.jsonl [more.jsonl ...] [-o DIR] [--no-plots]

Prints markdown to stdout, one table per kind of row present:
  cache-ycsb (kv_cache)   trace, capacity, bucket width, eviction, sync, layout, op order,
                          G ops/s, hit ratio, exact LRU's hit ratio and the gap in points
  cache-ycsb (baselines)  cpu_sharded_lru / memcached: M ops/s and hit ratio
  cache-hkv               operation x load, one column per (sync, layout): G ops/s (median)
  cache-submitter         submit mode, buffers, threshold: M ops/s, mean batch, latency p50 / p99 (us), copies each way
                          as a share of the pinned copy bandwidth of the same run, verified
and, unless --no-plots, writes into DIR (default: <first input's folder>/plots):
  cache-hit-ratio.png     hit ratio per trace and capacity, one bar per eviction policy, exact LRU marked
  cache-submitter.png     throughput and latency p50 / p99 against the batch threshold
Rows measured more than once (files appended by several runs): the last one wins.
"""
import argparse
import os
import sys
from collections import OrderedDict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plot_results import read_records  # noqa: E402  (the same reader, every warpkv-bench row)


def last_wins(recs, key):
    kept = OrderedDict()
    for r in recs:
        kept[key(r)] = r
    return list(kept.values())


def trace_name(r):
    return f"{r.get('ycsb_workload', '?')} {r.get('distribution', '?')}"


def pct(x):
    return f"{100 * x:.0f}%"


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def refused_sets(r):
    """memcached rows: sets refused for lack of memory after the client's retries, in the load and
    the run phase (client-counted: sets with a reply), and the server's store_no_memory (every
    refusal, retries and noreply sets included). '-' for other structures, '?' for rows written
    before these fields existed (their refusals were counted as failures)."""
    if r.get("structure") != "memcached":
        return "-"
    keys = ("memcached_load_sets_refused", "memcached_run_sets_refused", "memcached_server_store_no_memory")
    if not all(k in r for k in keys):
        return "?"
    return " / ".join(str(r[k]) for k in keys)


def ycsb_tables(recs):
    out = []
    dev = [r for r in recs if r.get("workload") == "cache-ycsb" and r.get("structure") == "kv_cache"]
    dev = last_wins(dev, lambda r: (r.get("backend"), r.get("records"), trace_name(r), r.get("capacity_fraction"),
                                    r.get("bucket_width"),
                                    r.get("eviction", "lru"), r.get("sync", "optimistic"), r.get("layout", "slab"),
                                    r.get("op_order", "mixed")))
    if dev:
        unit = "G ops/s" if dev[0].get("backend") == "cuda" else "G ops/s (host, not GPU)"
        rows = []
        for r in dev:
            rows.append([trace_name(r), r.get("records", ""), pct(r["capacity_fraction"]), r.get("bucket_width"), r.get("eviction", "lru"),
                         r.get("sync", "optimistic"), r.get("layout", "slab"), r.get("op_order", "mixed"),
                         f"{r.get('gops', 0):.4g}", f"{r['hit_ratio']:.4f}", f"{r['exact_lru_hit_ratio']:.4f}",
                         f"{r['hit_ratio_gap_pp']:.2f}"])
        out.append("### kv_cache on YCSB traces\n\n" + table(
            ["trace", "records", "capacity", "W", "eviction", "sync", "layout", "op order", unit, "hit", "exact LRU", "gap (pp)"], rows))
    base = [r for r in recs if r.get("workload") == "cache-ycsb" and r.get("structure") != "kv_cache"]
    base = last_wins(base, lambda r: (r.get("structure"), r.get("memcached_pipelined_sets"), r.get("records"),
                                      trace_name(r), r.get("capacity_fraction")))
    if base:
        rows = []
        for r in base:
            name = r.get("structure", "?").split(" ")[0]
            if r.get("memcached_pipelined_sets"):
                name += " (pipelined sets)"
            rows.append([trace_name(r), pct(r["capacity_fraction"]), name, r.get("threads", ""), f"{r.get('mops', 0):.3f}",
                         f"{r['hit_ratio']:.4f}", refused_sets(r), r.get("verified", "")])
        out.append("### CPU baselines on the same traces\n\n" + table(
            ["trace", "capacity", "structure", "threads", "M ops/s", "hit", "refused sets (load / run / server)", "verified"],
            rows))
    return out


def hkv_table(recs):
    hkv = [r for r in recs if r.get("workload") == "cache-hkv"]
    hkv = last_wins(hkv, lambda r: (r.get("operation"), r.get("load"), r.get("sync", "optimistic"), r.get("layout", "slab")))
    if not hkv:
        return []
    modes = list(OrderedDict.fromkeys((r.get("sync", "optimistic"), r.get("layout", "slab")) for r in hkv))
    cells = {(r["operation"], r["load"], r.get("sync", "optimistic"), r.get("layout", "slab")): r for r in hkv}
    rows = []
    for op, load in OrderedDict.fromkeys((r["operation"], r["load"]) for r in hkv):
        row = [op, f"{load:.2f}"]
        for sync, layout in modes:
            c = cells.get((op, load, sync, layout))
            row.append(f"{c['gops']:.4g}" if c else "")
        rows.append(row)
    unit = "" if hkv[0].get("backend") == "cuda" else " (host, not GPU)"
    return [f"### HierarchicalKV's configuration, G ops/s{unit}\n\n" +
            table(["operation", "load"] + [f"{s} / {l}" for s, l in modes], rows)]


def submitter_table(recs):
    sub = [r for r in recs if r.get("workload") == "cache-submitter"]
    sub = last_wins(sub, lambda r: (r.get("submit", "single"), r.get("buffers", 1), r.get("threshold"), r.get("threads"),
                                    r.get("deadline_us")))
    if not sub:
        return []

    def share(r, way):  # rows before the pinned pipeline have no copy figures
        f = r.get(f"{way}_fraction_of_pinned")
        return "" if f is None else f"{r[way + '_gbs']:.2f} ({pct(f)})"

    rows = [[r.get("submit", "single"), r.get("buffers", 1), r["threshold"], r["threads"], r["window"], r["deadline_us"], f"{r['mops']:.3f}",
             f"{r['mean_batch']:.0f}", f"{r['latency_us_p50']:.1f}", f"{r['latency_us_p99']:.1f}", share(r, "h2d"),
             share(r, "d2h"), r.get("verified", "")] for r in sub]
    return ["### Host front end (cache_submitter)\n\n" + table(
        ["submit", "buffers", "threshold", "threads", "window", "deadline (us)", "M ops/s", "mean batch",
         "p50 (us, per op or bulk)", "p99 (us)",
         "H2D GB/s (of pinned)", "D2H GB/s (of pinned)", "verified"], rows)]


def plots(recs, out_dir):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written = []
    os.makedirs(out_dir, exist_ok=True)

    def save(fig, name):
        fig.tight_layout()
        path = os.path.join(out_dir, name)
        fig.savefig(path, dpi=120)
        plt.close(fig)
        written.append(path)

    dev = [r for r in recs if r.get("workload") == "cache-ycsb" and r.get("structure") == "kv_cache"
           and r.get("op_order", "mixed") == "mixed"]
    if dev:  # one trace size: the largest present
        top = max(r.get("records", 0) for r in dev)
        dev = [r for r in dev if r.get("records", 0) == top]
    if dev:
        groups = list(OrderedDict.fromkeys((trace_name(r), r["capacity_fraction"]) for r in dev))
        policies = list(OrderedDict.fromkeys(r.get("eviction", "lru") for r in dev))
        fig, ax = plt.subplots(figsize=(max(6, 1.2 * len(groups)), 4))
        width = 0.8 / max(1, len(policies))
        for k, pol in enumerate(policies):
            xs, ys = [], []
            for g, (tr, cap) in enumerate(groups):
                hits = [r["hit_ratio"] for r in dev if (trace_name(r), r["capacity_fraction"]) == (tr, cap)
                        and r.get("eviction", "lru") == pol]
                if hits:
                    xs.append(g + (k - (len(policies) - 1) / 2) * width)
                    ys.append(hits[-1])
            ax.bar(xs, ys, width, label=pol)
        for g, (tr, cap) in enumerate(groups):
            ex = [r["exact_lru_hit_ratio"] for r in dev if (trace_name(r), r["capacity_fraction"]) == (tr, cap)]
            ax.hlines(ex[-1], g - 0.45, g + 0.45, colors="black", linestyles="dashed", label="exact LRU" if g == 0 else None)
        ax.set_xticks(range(len(groups)))
        ax.set_xticklabels([f"{tr}\n{pct(cap)}" for tr, cap in groups])
        ax.set_ylabel("hit ratio")
        lo = min(min(r["hit_ratio"] for r in dev), min(r["exact_lru_hit_ratio"] for r in dev))
        ax.set_ylim(max(0.0, lo - 0.05), 1.0)
        ax.legend(fontsize=8)
        ax.set_title(f"kv_cache eviction policies vs exact LRU ({dev[0].get('backend')})")
        save(fig, "cache-hit-ratio.png")
    sub = [r for r in recs if r.get("workload") == "cache-submitter"]
    if sub:
        sub = sorted(last_wins(sub, lambda r: (r.get("submit", "single"), r.get("buffers", 1), r["threshold"])),
                     key=lambda r: r["threshold"])
        fig, (a1, a2) = plt.subplots(1, 2, figsize=(9, 3.6))
        for how, nb in sorted({(r.get("submit", "single"), r.get("buffers", 1)) for r in sub}):  # a line per mode
            rs = [r for r in sub if r.get("buffers", 1) == nb and r.get("submit", "single") == how]
            th = [r["threshold"] for r in rs]
            a1.plot(th, [r["mops"] for r in rs], marker="o", label=f"{how}, {nb} buffers")
            a2.plot(th, [r["latency_us_p50"] for r in rs], marker="o", label=f"p50, {how}, {nb} buffers")
            a2.plot(th, [r["latency_us_p99"] for r in rs], marker="s", linestyle="--", label=f"p99, {how}, {nb} buffers")
        a1.set_xscale("log", base=2)
        a1.set_xlabel("batch threshold")
        a1.set_ylabel("M ops/s")
        a1.set_yscale("log")  # bulk and single differ by orders of magnitude
        a1.legend(fontsize=8)
        a2.set_xscale("log", base=2)
        a2.set_yscale("log")
        a2.set_xlabel("batch threshold")
        a2.set_ylabel("submit to result (us)")
        a2.legend(fontsize=8)
        fig.suptitle(f"cache_submitter ({sub[0].get('backend')}, {sub[0]['threads']} client threads)")
        save(fig, "cache-submitter.png")
    return written


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("inputs", nargs="+", help="JSON-lines files written by warpkv-bench cache --out")
    ap.add_argument("-o", "--out-dir", default=None, help="where PNGs go (default: <first input's folder>/plots)")
    ap.add_argument("--no-plots", action="store_true", help="markdown only")
    args = ap.parse_args(argv)
    recs = read_records(args.inputs, keep=lambda rec: rec.get("tool") == "warpkv-bench")
    parts = ycsb_tables(recs) + hkv_table(recs) + submitter_table(recs)
    if not parts:
        sys.exit("no warpkv-bench cache rows in the input")
    print("\n\n".join(parts))
    if not args.no_plots:
        out_dir = args.out_dir or os.path.join(os.path.dirname(os.path.abspath(args.inputs[0])), "plots")
        for p in plots(recs, out_dir):
            print(f"wrote {p}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
