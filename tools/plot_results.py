#!/usr/bin/env python3
"""Plot warpkv-bench JSON lines as PNG figures.

    python3 tools/plot_results.py results.jsonl [more.jsonl ...] -o plots/

Writes, per backend and device:
  static-<backend>-<device>[-n<keys>].png   throughput vs load factor, one panel per operation,
                                            one line per map configuration (type and tile size)
  dynamic-<backend>-<device>.png            throughput vs key range, one panel per mix,
                                            one line per configuration and batch size
  stm-<backend>-<device>.png                warpkv-bench stm: bank transfers/s and STM abort
                                            ratio vs accounts, sort time vs keys, the papers'
                                            bank and the hash set (commits or ops/s per setting)
When a measurement appears more than once (results appended by several runs), the last one wins.
Host-backend results are plotted in M ops/s and labelled as CPU timings.
"""
import argparse
import json
import math
import os
import re
import sys
from collections import OrderedDict, defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)

STATIC_OPS = ["insert", "find_hit", "find_miss", "find_mixed"]


def read_records(paths, keep=lambda rec: rec.get("tool") == "warpkv-bench" and "gops" in rec):
    """The JSON rows of the files that `keep` accepts (default: warpkv-bench rows with a throughput)."""
    records = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            for lineno, line in enumerate(f, 1):
                line = line.strip()
                if not line or not line.startswith("{"):
                    continue
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError as e:
                    print(f"{path}:{lineno}: skipped (not JSON: {e})", file=sys.stderr)
                    continue
                if keep(rec):
                    records.append(rec)
    return records


def slug(text):
    return re.sub(r"[^A-Za-z0-9]+", "-", str(text)).strip("-").lower() or "unknown"


def scale_for(backend):
    """(factor applied to G ops/s, axis label)."""
    if backend == "host":
        return 1e3, "M ops/s (host backend: CPU wall clock, not GPU)"
    return 1.0, "G ops/s (median; bars: min-max run)"


def rate_range(rec, factor):
    ops = rec.get("keys") if rec.get("workload") == "static" else rec.get("ops")
    med = rec["gops"] * factor
    lo = hi = med
    if ops and rec.get("max_ms") and rec.get("min_ms"):
        lo = ops / (rec["max_ms"] * 1e6) * factor
        hi = ops / (rec["min_ms"] * 1e6) * factor
    return med, med - lo, hi - med


def subtitle(recs):
    r = recs[-1]
    commits = sorted({x.get("commit", "unknown") for x in recs})
    parts = [f"{r.get('device', '?')}", f"backend {r.get('backend', '?')}", f"timing {r.get('timing', '?')}",
             "commit " + ",".join(commits)]
    if r.get("driver_version"):
        parts.append(f"driver {r['driver_version']}")
    return " | ".join(parts)


def config_order(config, recs):
    """Sort configurations by key width, value width, tile size (numerically)."""
    for r in recs:
        if r.get("config") == config:
            return (r.get("key_bits", 0), r.get("value_bits", 0), r.get("tile", 0), str(config))
    return (0, 0, 0, str(config))


def panel_grid(n):
    cols = 2 if n > 1 else 1
    rows = math.ceil(n / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(6.4 * cols, 4.2 * rows), squeeze=False)
    flat = [ax for row in axes for ax in row]
    for ax in flat[n:]:
        ax.set_visible(False)
    return fig, flat[:n]


def finish_axis(ax, log_y):
    if log_y:
        ax.set_yscale("log")
    else:
        ax.set_ylim(bottom=0)


def save_figure(fig, title, recs, out_dir, name, written):
    """Titles the figure (with the records' device, backend and commits) and writes out_dir/name.png."""
    fig.suptitle(f"{title}\n{subtitle(recs)}", fontsize=10)
    fig.tight_layout()
    path = os.path.join(out_dir, name + ".png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    written.append(path)


def plot_static(recs, out_dir, written, log_y):
    groups = defaultdict(list)
    for r in recs:
        groups[(r.get("backend"), r.get("device"), r.get("keys_requested"))].append(r)
    multi_sizes = defaultdict(set)
    for backend, device, keys in groups:
        multi_sizes[(backend, device)].add(keys)
    for (backend, device, keys), rs in groups.items():
        factor, ylabel = scale_for(backend)
        # last record wins for each (config, operation, load factor)
        latest = OrderedDict()
        for r in rs:
            latest[(r.get("config"), r.get("operation"), r.get("load_factor"))] = r
        ops = [op for op in STATIC_OPS if any(k[1] == op for k in latest)]
        ops += sorted({k[1] for k in latest} - set(ops))
        fig, axes = panel_grid(len(ops))
        configs = sorted({k[0] for k in latest}, key=lambda c: config_order(c, latest.values()))
        for ax, op in zip(axes, ops):
            for cfg in configs:
                pts = sorted((k[2], r) for k, r in latest.items() if k[0] == cfg and k[1] == op)
                if not pts:
                    continue
                xs = [p[0] for p in pts]
                vals = [rate_range(p[1], factor) for p in pts]
                line = ax.errorbar(xs, [v[0] for v in vals], yerr=[[v[1] for v in vals], [v[2] for v in vals]],
                                   marker="o", capsize=3, label=cfg)
                grew = [(x, v[0]) for x, v, p in zip(xs, vals, pts) if p[1].get("grew")]
                if grew:
                    ax.scatter([g[0] for g in grew], [g[1] for g in grew], marker="x", s=90,
                               color=line[0].get_color(), zorder=5)
            ax.set_title(op + ("  (x: map grew)" if any(r.get("grew") for k, r in latest.items() if k[1] == op) else ""))
            ax.set_xlabel("load factor")
            ax.set_ylabel(ylabel)
            finish_axis(ax, log_y)
            ax.grid(True, alpha=0.3)
            ax.legend(fontsize=8)
        n_txt = f", N={keys}" if keys else ""
        name = f"static-{slug(backend)}-{slug(device)}"
        if len(multi_sizes[(backend, device)]) > 1:
            name += f"-n{keys}"
        save_figure(fig, f"warpkv static{n_txt}", rs, out_dir, name, written)


def plot_dynamic(recs, out_dir, written, log_y):
    groups = defaultdict(list)
    for r in recs:
        groups[(r.get("backend"), r.get("device"))].append(r)
    for (backend, device), rs in groups.items():
        factor, ylabel = scale_for(backend)
        latest = OrderedDict()
        for r in rs:
            latest[(r.get("mix"), r.get("config"), r.get("ops"), r.get("prefill"), r.get("key_range"))] = r
        mixes = sorted({k[0] for k in latest}, key=str)
        fig, axes = panel_grid(len(mixes))
        for ax, mix in zip(axes, mixes):
            series = sorted({k[1:4] for k in latest if k[0] == mix},
                            key=lambda s: (config_order(s[0], latest.values()), s[1] or 0, str(s[2])))
            for cfg, ops, prefill in series:
                pts = sorted((k[4], r) for k, r in latest.items() if k[0] == mix and k[1:4] == (cfg, ops, prefill))
                xs = [p[0] for p in pts]
                vals = [rate_range(p[1], factor) for p in pts]
                line = ax.errorbar(xs, [v[0] for v in vals], yerr=[[v[1] for v in vals], [v[2] for v in vals]],
                                   marker="o", capsize=3, label=f"{cfg}, {ops:.0e} ops, prefill {prefill}")
                grew = [(x, v[0]) for x, v, p in zip(xs, vals, pts) if p[1].get("grew")]
                if grew:
                    ax.scatter([g[0] for g in grew], [g[1] for g in grew], marker="x", s=90,
                               color=line[0].get_color(), zorder=5)
            ax.set_xscale("log")
            grew_any = any(r.get("grew") for k, r in latest.items() if k[0] == mix)
            ax.set_title(f"mix insert/erase/find = {mix}" + ("  (x: map grew)" if grew_any else ""))
            ax.set_xlabel("key range R (keys uniform in [1, R])")
            ax.set_ylabel(ylabel)
            finish_axis(ax, log_y)
            ax.grid(True, alpha=0.3, which="both")
            ax.legend(fontsize=8)
        save_figure(fig, "warpkv dynamic (one concurrent mixed batch)", rs, out_dir,
                    f"dynamic-{slug(backend)}-{slug(device)}", written)


def plot_stm(recs, out_dir, written):
    """One figure per GPU backend and device; CPU-only sort rows (backend "cpu") join every figure."""
    cpu_rows = [r for r in recs if r.get("backend") == "cpu"]
    groups = defaultdict(list)
    for r in recs:
        if r.get("backend") != "cpu":
            groups[(r.get("backend"), r.get("device"))].append(r)
    for (backend, device), rs in groups.items():
        latest = OrderedDict()  # last record wins per measurement
        for r in rs + cpu_rows:
            latest[(r["workload"], r.get("variant"), r.get("accounts"), r.get("keys"), r.get("buckets"),
                    r.get("read_only_percent"), r.get("update_percent"))] = r
        by = defaultdict(list)
        for r in latest.values():
            by[r["workload"]].append(r)
        fig, axes = panel_grid(5)
        host = " (host backend: CPU wall clock)" if backend == "host" else ""

        def lines(ax, rows, x, y, only=lambda r: True):
            for v in sorted({r.get("variant") for r in rows if only(r)}):
                pts = sorted((r[x], r[y]) for r in rows if r.get("variant") == v and only(r) and r.get(x) and y in r)
                if pts:
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=v)
            ax.set_xscale("log", base=2)
            ax.grid(True, alpha=0.3, which="both")
            if ax.lines:
                ax.legend(fontsize=7)

        bank = by.get("stm-bank", [])
        lines(axes[0], bank, "accounts", "mtransfers_per_s")
        axes[0].set_yscale("log")
        axes[0].set(title="bank transfers", xlabel="accounts", ylabel="M transfers/s" + host)
        lines(axes[1], bank, "accounts", "abort_ratio", only=lambda r: "abort_ratio" in r)
        axes[1].set(title="STM abort ratio (bank)", xlabel="accounts", ylabel="aborted / attempts", ylim=(0, 1))
        lines(axes[2], by.get("stm-sort", []), "keys", "median_ms")
        axes[2].set_yscale("log")
        axes[2].set(title="bitonic sort (cpu-*: CPU wall clock)", xlabel="keys", ylabel="ms (median)")
        for ax, workload, metric, ylabel, setting in (
                (axes[3], "stm-paper-bank", "commits_per_s", "commits/s", lambda r: f"{r.get('accounts')} acc, {r.get('read_only_percent')}% RO"),
                (axes[4], "stm-map", "mops_per_s", "M ops/s", lambda r: f"{r.get('buckets')} buckets, {r.get('update_percent')}% renames")):
            rows = by.get(workload, [])
            settings = sorted({setting(r) for r in rows})
            variants = sorted({r.get("variant") for r in rows})
            width = 0.8 / max(1, len(variants))
            for i, v in enumerate(variants):
                vals = {setting(r): r.get(metric, 0) for r in rows if r.get("variant") == v}
                ax.bar([k + i * width for k in range(len(settings))], [vals.get(st, 0) for st in settings], width, label=v)
            ax.set_xticks([k + 0.4 - width / 2 for k in range(len(settings))], settings, fontsize=7, rotation=15)
            ax.set_yscale("log")
            ax.set(title=workload, ylabel=ylabel + host)
            ax.grid(True, alpha=0.3, axis="y")
            if variants:
                ax.legend(fontsize=7)
        save_figure(fig, "warpkv-bench stm", rs, out_dir, f"stm-{slug(backend)}-{slug(device)}", written)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("inputs", nargs="+", help="JSON-lines files written by warpkv-bench --out")
    ap.add_argument("-o", "--out-dir", default=None, help="where PNGs go (default: <first input's folder>/plots)")
    ap.add_argument("--log-y", action="store_true", help="logarithmic throughput axis")
    args = ap.parse_args(argv)

    records = read_records(args.inputs)
    if not records:
        print("plot_results: no warpkv-bench records found", file=sys.stderr)
        return 1
    out_dir = args.out_dir or os.path.join(os.path.dirname(os.path.abspath(args.inputs[0])), "plots")
    os.makedirs(out_dir, exist_ok=True)
    written = []
    static = [r for r in records if r.get("workload") == "static"]
    dynamic = [r for r in records if r.get("workload") == "dynamic"]
    stm = [r for r in records if str(r.get("workload", "")).startswith("stm-")]
    if stm:
        plot_stm(stm, out_dir, written)
    if static:
        plot_static(static, out_dir, written, args.log_y)
    if dynamic:
        plot_dynamic(dynamic, out_dir, written, args.log_y)
    if not written:
        print("plot_results: no static, dynamic or stm records to plot", file=sys.stderr)
        return 1
    for p in written:
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
