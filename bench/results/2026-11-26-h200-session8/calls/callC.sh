#!/usr/bin/env bash
# Session 8, device call C (working tree: get_or_set combining, key digests, YCSB passes):
# cache suite + memcheck/racecheck/synccheck; YCSB A and C at 10% (W = 8): combining on/off x
# layout slab / slab-digest; HierarchicalKV setting slab vs slab-digest; bucket widths with combining.
set -u
D=$PWD/.carry/c7; O=${OUT:-/tmp/out}; mkdir -p "$O/all"
export LD_LIBRARY_PATH=$D/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} WARPKV_COMMIT=${WARPKV_COMMIT:-s8-callC}
pack() { tar czf "$O/all.tgz" -C "$O" all; }
trap pack EXIT
WARPKV_GPU_PREBUILT=1 WARPKV_GPU_BUILD=$D WARPKV_GPU_PARALLEL=1 WARPKV_GPU_MODULES="cache" \
  OUT=$O/all/check timeout 200 scripts/gpu-check >"$O/all/check.txt" 2>&1
echo "gpu-check cache rc=$? (${SECONDS}s)"; grep -E "==|gpu-check|FAILED|PASSED" "$O/all/check.txt" | head -30
B=$D/warpkv-bench
run() {  # run NAME SECONDS ARGS...
  local name=$1 s=$2; shift 2
  timeout "$s" "$B" "$@" --out "$O/all/$name.jsonl" >/dev/null 2>"$O/all/$name.log"
  echo "== $name rc=$? (${SECONDS}s)"; grep -E "^(ycsb|hkv)" "$O/all/$name.log"
}
run ycsb-combine 120 cache --backend cuda --ops 2e6 --workloads A,C --distributions zipfian --capacity 0.1 \
  --bucket-widths 8 --combine on,off --layouts slab,slab-digest --repeats 3 --warmup 1
run hkv-digest 150 cache --backend cuda --hkv --no-ycsb --layouts slab,slab-digest
run ycsb-widths 110 cache --backend cuda --ops 2e6 --workloads A,C --distributions zipfian --capacity 0.1 \
  --bucket-widths 4,8,16,32 --op-order mixed,grouped --repeats 3 --warmup 1
