#!/usr/bin/env python3
"""Check the hot bulk kernels' registers and local memory from ptxas's -v report, without a GPU.

The device suites read the same numbers with cudaFuncGetAttributes (tests/common/kernel_budget.hpp,
HotPathsKeepTheirRegisterBudget) and fail when a hot kernel (find, the first launch of an insert
batch, erase) passes its register bound or uses local memory. That check needs a GPU, so a change
to a shared slow-path helper that added 8 bytes of local memory to H64's tile-4 erase kernel
landed and was caught only by the next device call (session 25). scripts/sass-lint compiles
tests/sass/hot_kernels.cu with -Xptxas -v and runs this script on the report, so the same bounds
are checked wherever nvcc is found (ctest sass_lint_hot_kernels).

Bounds (the device tests' own; keep the two in step):
  hopscotch_bucket_ref<u32, u32>, tiles 1 and 4: find 48, insert 48, erase 40
  hopscotch_ref<u32, u32> tile 4 and hopscotch_ref<u64, u64> tile 1: find 40, insert 48, erase 48
and no local memory (stack frame, spill stores, spill loads all 0) in any of them.

  scripts/kernel_budgets.py [--expect N] PTXAS_LOG...   # exits 1 when the count of violations != N
"""
import argparse
import re
import subprocess
import sys

# (the ref as the demangled name spells it, tiles, bounds {find, insert, erase})
BOUNDS = [
    ("hopscotch_bucket_ref<unsigned int, unsigned int>", (1, 4), {"find": 48, "insert": 48, "erase": 40}),
    ("hopscotch_ref<unsigned int, unsigned int>", (4,), {"find": 40, "insert": 48, "erase": 48}),
    ("hopscotch_ref<unsigned long, unsigned long>", (1,), {"find": 40, "insert": 48, "erase": 48}),
]


def parse(lines):
    """ptxas -v lines -> {mangled name: {regs, stack, spill_st, spill_ld}}."""
    out, cur = {}, None
    for line in lines:
        m = re.search(r"Compiling entry function '(\S+)'", line) or re.search(r"Function properties for (\S+)", line)
        if m:
            cur = m.group(1)
            out.setdefault(cur, {})
            continue
        if cur is None:
            continue
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m:
            out[cur].update(stack=int(m.group(1)), spill_st=int(m.group(2)), spill_ld=int(m.group(3)))
        m = re.search(r"Used (\d+) registers", line)
        if m:
            out[cur]["regs"] = int(m.group(1))
    return out


def demangle(names):
    try:
        r = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True, check=True)
        return r.stdout.splitlines()
    except (OSError, subprocess.CalledProcessError):
        sys.exit("kernel_budgets: c++filt (binutils) is needed to read the kernel names")


def kind_of(name):
    """The hot kernel a demangled name is (find / insert / erase), or None. Hot kernels are
    tile_kernel<T, tile_op_body<T, Op>> (one op per tile, core/batch.hpp)."""
    m = re.match(r"void warpkv::detail::tile_kernel<(\d+), warpkv::detail::tile_op_body<\d+, (.*)>\s*>\(", name)
    if not m:
        return None, None
    tile, op = int(m.group(1)), m.group(2)
    if op.startswith("warpkv::detail::find_op<"):
        return "find", tile
    if op.startswith("warpkv::detail::erase_op<"):
        return "erase", tile
    # The first launch of an insert batch: the fast insert handing back what it leaves full.
    if op.startswith("warpkv::detail::handing_back_op<warpkv::detail::insert_op<") and op.rstrip("> ").endswith("(warpkv::detail::pass)0"):
        return "insert", tile
    return None, None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--expect", type=int, default=0, help="violations expected (a test of the check itself)")
    ap.add_argument("logs", nargs="+")
    a = ap.parse_args()
    kernels = {}
    for f in a.logs:
        with open(f) as fh:
            kernels.update(parse(fh))
    names = list(kernels)
    bad, checked = [], 0
    for mangled, name in zip(names, demangle(names)):
        kind, tile = kind_of(name)
        if kind is None:
            continue
        for pattern, tiles, bounds in BOUNDS:
            if tile not in tiles or pattern not in name:
                continue
            k = kernels[mangled]
            checked += 1
            label = "%s %s tile %d" % (pattern, kind, tile)
            if k.get("regs", 0) > bounds[kind]:
                bad.append("%s: %d registers (bound %d)" % (label, k["regs"], bounds[kind]))
            local = (k.get("stack", 0), k.get("spill_st", 0), k.get("spill_ld", 0))
            if any(local):
                bad.append("%s: local memory (stack %d B, spill stores %d B, spill loads %d B)" % ((label,) + local))
            print("kernel_budgets: %-70s %2d registers, stack %d B" % (label, k.get("regs", 0), local[0]))
    for b in bad:
        print("kernel_budgets: VIOLATION " + b)
    print("kernel_budgets: %d hot kernels checked, %d violations (expected %d)" % (checked, len(bad), a.expect))
    if checked == 0:
        print("kernel_budgets: no hot kernel found in the report (was it compiled with -Xptxas -v?)")
        return 1
    return 0 if len(bad) == a.expect else 1


if __name__ == "__main__":
    sys.exit(main())
