#!/usr/bin/env bash
# Session 8, device call G1 (commit 7ee1860): cache suite + sanitizers; YCSB A and C at 10%:
# bucket widths 4..32 and operation order mixed vs grouped (each row the median of 3 passes).
set -u
D=$PWD/.carry/c10; O=${OUT:-/tmp/out}; mkdir -p "$O/all"
export LD_LIBRARY_PATH=$D/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} WARPKV_COMMIT=7ee1860
pack() { tar czf "$O/all.tgz" -C "$O" all; }
trap pack EXIT
WARPKV_GPU_PREBUILT=1 WARPKV_GPU_BUILD=$D WARPKV_GPU_PARALLEL=1 WARPKV_GPU_MODULES="cache" \
  OUT=$O/all/check timeout 200 scripts/gpu-check >"$O/all/check.txt" 2>&1
echo "gpu-check cache rc=$? (${SECONDS}s)"; grep -E "==|gpu-check|FAILED" "$O/all/check.txt" | head -30
timeout 200 $D/warpkv-bench cache --backend cuda --ops 2e6 --workloads A,C --distributions zipfian --capacity 0.1 \
  --bucket-widths 4,8,16,32 --op-order mixed,grouped --repeats 3 --warmup 1 --out "$O/all/ycsb-widths.jsonl" >/dev/null 2>"$O/all/ycsb-widths.log"
echo "widths rc=$? (${SECONDS}s)"; grep "^ycsb" "$O/all/ycsb-widths.log"
